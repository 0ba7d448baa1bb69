"""What every ftuner pass shares: its options, their parsing and help, its target.

A pass is a frozen dataclass. Its `name` is the `ftuner-opt` flag and the pipeline element; its fields
are the options, written `name{opt-a=1 opt-b=x}` (dashes for underscores) like upstream passes. An
option's type is its field's annotation (bool, int or str), its range or choices are declared with it
(`option(0, doc, minimum=0)`), and every value is checked when the pass is built, from an option
string or from Python. The `target` field is set by the driver from `--target`, not from the option
string.
"""
from __future__ import annotations

import dataclasses
import functools
import typing
from typing import ClassVar

from ..hardware.cpu import CpuTarget


MAX_THREADS = 4096            # options' physical bounds, as the targets' (hardware/cpu.py)
MAX_FORCED_ROWS = 64
MAX_FORCED_COLUMNS = 256


@dataclasses.dataclass(frozen=True)
class ModulePass:
    name: ClassVar[str]
    summary: ClassVar[str]
    target: CpuTarget | None = dataclasses.field(default=None, compare=False, repr=False)   # or a GpuTarget

    def __post_init__(self):
        hints = _option_types(type(self))
        for f in self.option_fields():
            _check(getattr(self, f.name), f, hints[f.name], self.name)

    def passes(self) -> list:
        """The passes this one runs, in order: itself, or (a pipeline pass) its phases' passes."""
        return [self]

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
            values[fields[key].name] = _convert(raw, fields[key], _option_types(cls)[fields[key].name], cls.name)
        return cls(target=target, **values)

    def pipeline_text(self) -> str:
        opts = " ".join(f"{f.name.replace('_', '-')}={getattr(self, f.name)}" for f in self.option_fields())
        return f"{self.name}{{{opts}}}" if opts else self.name

    @classmethod
    def help(cls) -> str:
        lines = [f"  --{cls.name:<28} {cls.summary}"]
        for f in cls.option_fields():
            doc, limits = f.metadata.get("doc", ""), _limits(f)
            setting = f"{f.name.replace('_', '-')}={f.default}"
            lines.append(f"      {setting:<24} {doc}{f' ({limits})' if limits else ''}")
        return "\n".join(lines)

    def resolved_target(self) -> CpuTarget:
        """The target the pass was built with; never a silent guess (ftuner-opt gives `--target`, or
        the module's ftuner.target, or says it uses the host)."""
        if self.target is None:
            raise ValueError(f"{self.name} needs a target: build it with target=..., or run it through "
                             f"ftuner-opt --target=SPEC")
        return self.target


@dataclasses.dataclass(frozen=True)
class Upstream:
    """Upstream MLIR passes as an entry of a phase list, with why they run there."""
    pipeline: str
    why: str

    def passes(self) -> list:
        return [self]

    def steps(self) -> list:
        return [self.pipeline]


@dataclasses.dataclass(frozen=True)
class Phase:
    """A named stretch of a pipeline: what the IR is like in it, and its passes in order."""
    name: str
    doc: str
    passes: list


def option(default, doc: str, *, choices: tuple | None = None, minimum: int | None = None,
           maximum: int | None = None):
    return dataclasses.field(default=default, metadata={"doc": doc, "choices": choices, "minimum": minimum,
                                                        "maximum": maximum})


@functools.cache
def _option_types(cls) -> dict[str, type]:
    """The options' declared types (the annotations, resolved); each must be bool, int or str."""
    hints = typing.get_type_hints(cls)
    types = {}
    for f in cls.option_fields():
        kind = hints[f.name]
        if kind not in (bool, int, str):
            raise TypeError(f"pass {cls.name}: option {f.name} is declared {kind!r}; options are bool, int or str")
        types[f.name] = kind
    return types


def _limits(field: dataclasses.Field) -> str:
    meta = field.metadata
    if meta.get("choices"):
        return "one of " + ", ".join(map(str, meta["choices"]))
    lo, hi = meta.get("minimum"), meta.get("maximum")
    if lo is not None and hi is not None:
        return f"{lo}..{hi}"
    return f">= {lo}" if lo is not None else (f"<= {hi}" if hi is not None else "")


def _check(value, field: dataclasses.Field, kind: type, pass_name: str) -> None:
    flag = field.name.replace("_", "-")
    if type(value) is not kind:                    # bool is an int subclass: compare exactly
        raise ValueError(f"pass {pass_name}: option {flag} expects {kind.__name__}, got {value!r}")
    meta = field.metadata
    out_of_range = (meta.get("choices") and value not in meta["choices"]) or \
        (meta.get("minimum") is not None and value < meta["minimum"]) or \
        (meta.get("maximum") is not None and value > meta["maximum"])
    if out_of_range:
        raise ValueError(f"pass {pass_name}: option {flag} must be {_limits(field)}, got {value!r}")


def _convert(raw: str, field: dataclasses.Field, kind: type, pass_name: str):
    try:
        if kind is bool:
            if raw.lower() not in ("1", "0", "true", "false"):
                raise ValueError(raw)
            return raw.lower() in ("1", "true")
        return kind(raw)
    except ValueError:
        raise ValueError(f"pass {pass_name}: option {field.name.replace('_', '-')} expects "
                         f"{kind.__name__}, got {raw!r}") from None
