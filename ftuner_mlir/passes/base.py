"""What every ftuner pass shares: its options, their parsing and help, its target.

A pass is a frozen dataclass. Its `name` is the `ftuner-opt` flag and the pipeline element; its fields
are the options, written `name{opt-a=1 opt-b=x}` (dashes for underscores) like upstream passes. The
`target` field is set by the driver from `--target`, not from the option string.
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar

from ..hardware.cpu import CpuTarget


@dataclasses.dataclass(frozen=True)
class ModulePass:
    name: ClassVar[str]
    summary: ClassVar[str]
    target: CpuTarget | None = dataclasses.field(default=None, compare=False, repr=False)   # or a GpuTarget

    def steps(self) -> list:
        """What the pass does, as Python callbacks `fn(module_op)` and upstream pipeline strings. The
        driver adds them one by one to a single pass manager: upstream pipelines must not run nested
        inside a Python pass (the NVVM pipeline extends the dialect registry while it runs, which MLIR
        forbids during a pass manager's execution)."""
        return [self.apply]

    def apply(self, module_op) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    # -- options -----------------------------------------------------------------------------
    @classmethod
    def option_fields(cls) -> list[dataclasses.Field]:
        return [f for f in dataclasses.fields(cls) if f.name != "target"]

    @classmethod
    def from_options(cls, text: str, target: CpuTarget | None) -> "ModulePass":
        """Build from the inside of `name{...}`: space-separated `key=value` pairs."""
        fields = {f.name.replace("_", "-"): f for f in cls.option_fields()}
        values = {}
        for item in text.split():
            key, eq, raw = item.partition("=")
            if key not in fields or not eq:
                known = ", ".join(sorted(fields)) or "none"
                raise ValueError(f"pass {cls.name}: bad option {item!r} (options: {known})")
            values[fields[key].name] = _convert(raw, fields[key], cls.name)
        return cls(target=target, **values)

    def pipeline_text(self) -> str:
        opts = " ".join(f"{f.name.replace('_', '-')}={getattr(self, f.name)}" for f in self.option_fields())
        return f"{self.name}{{{opts}}}" if opts else self.name

    @classmethod
    def help(cls) -> str:
        lines = [f"  --{cls.name:<28} {cls.summary}"]
        for f in cls.option_fields():
            doc = f.metadata.get("doc", "")
            lines.append(f"      {f.name.replace('_', '-')}={f.default!s:<16} {doc}")
        return "\n".join(lines)

    def resolved_target(self) -> CpuTarget:
        """The target the pass was built with; never a silent guess (ftuner-opt gives `--target`, or
        the module's ftuner.target, or says it uses the host)."""
        if self.target is None:
            raise ValueError(f"{self.name} needs a target: build it with target=..., or run it through "
                             f"ftuner-opt --target=SPEC")
        return self.target


def option(default, doc: str):
    return dataclasses.field(default=default, metadata={"doc": doc})


def _convert(raw: str, field: dataclasses.Field, pass_name: str):
    kind = type(field.default)
    try:
        if kind is bool:
            if raw.lower() not in ("1", "0", "true", "false"):
                raise ValueError(raw)
            return raw.lower() in ("1", "true")
        return kind(raw)
    except ValueError:
        raise ValueError(f"pass {pass_name}: option {field.name.replace('_', '-')} expects "
                         f"{kind.__name__}, got {raw!r}") from None
