"""The package's import graph points down the layer order written once here (see ARCHITECTURE.md):
a module may import from its own package and from the layers below its own, never from above nor from
a sibling in its layer. Imports inside functions count: a lazy import is still an arrow."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "ftuner_mlir"

# Lowest first. Each entry is one layer: its units (sub-packages or top-level modules) may not import
# one another.
LAYERS = [
    ("settings", "errors", "version", "models"),
    ("runtime",),
    ("hardware",),
    ("families",),
    ("ukernel",),
    ("tuning",),
    ("ir",),
    ("codegen", "lowering", "analysis"),
    ("passes",),
    ("driver",),
    ("backends",),
    ("compiler", "freeze"),
    ("export",),
    ("__init__",),            # the public API: ftuner_mlir.compile, ftuner_mlir.CpuTarget, ...
    ("torch",),               # the PyTorch front end: modules in, compiled callables on tensors out
    ("tuner", "bench"),
    ("tools",),
]
LEVEL = {unit: level for level, units in enumerate(LAYERS) for unit in units}
# The runtime ships beside exported modules: the standard library, numpy and (optionally) torch, and
# ml_dtypes (bfloat16 arrays) for modules that take bf16, only. Bare names are the runtime's own modules
# as an exported folder imports them (no package there).
RUNTIME_THIRD_PARTY = {"numpy", "torch", "ml_dtypes", "ftuner_export", "shape_rules", "descriptors", "memref", "function", "profiler"}


def _unit(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _module_name(path: Path) -> list[str]:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def _imports(path: Path):
    """(imported absolute module, line) for every import in the file."""
    tree = ast.parse(path.read_text(), str(path))
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path)[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            if node.module is None or module == "ftuner_mlir":
                for alias in node.names:          # `from .. import settings` names a module
                    yield f"{module}.{alias.name}", node.lineno
            else:
                yield module, node.lineno


def _files():
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _violations(path: Path) -> list[str]:
    unit = _unit(path)
    if unit not in LEVEL:
        return [f"{path.relative_to(PACKAGE)}: unit '{unit}' has no place in LAYERS"]
    out = []
    for module, line in _imports(path):
        top = module.split(".")[0]
        where = f"{path.relative_to(PACKAGE)}:{line} imports {module}"
        if top != "ftuner_mlir":
            if unit == "runtime" and top not in sys.stdlib_module_names and top not in RUNTIME_THIRD_PARTY:
                out.append(f"{where}: the runtime uses the standard library and numpy only")
            continue
        parts = module.split(".")
        target = parts[1] if len(parts) > 1 else "__init__"
        if target == unit:
            continue
        if target not in LEVEL:
            out.append(f"{where}: '{target}' has no place in LAYERS")
        elif LEVEL[target] >= LEVEL[unit]:
            kind = "a sibling in its layer" if LEVEL[target] == LEVEL[unit] else "a layer above"
            out.append(f"{where}: {unit} may not import {target} ({kind})")
    return out


def test_every_unit_has_a_layer():
    units = {_unit(p) for p in _files()}
    assert units <= set(LEVEL), f"units missing from LAYERS: {sorted(units - set(LEVEL))}"


@pytest.mark.parametrize("path", _files(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down(path):
    assert _violations(path) == []


def test_checker_catches_an_upward_import(tmp_path, monkeypatch):
    """The check itself can fail: a runtime module importing a pass, and a pass importing the compiler."""
    fake = tmp_path / "ftuner_mlir"
    (fake / "runtime").mkdir(parents=True)
    (fake / "passes").mkdir()
    (fake / "runtime" / "bad.py").write_text("import mlir\nfrom ..passes import base\n")
    (fake / "passes" / "bad.py").write_text("def f():\n    from .. import compiler\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    runtime = _violations(fake / "runtime" / "bad.py")
    assert any("standard library" in v for v in runtime) and any("runtime may not import passes" in v for v in runtime)
    assert _violations(fake / "passes" / "bad.py") == [
        "passes/bad.py:2 imports ftuner_mlir.compiler: passes may not import compiler (a layer above)"]
