"""Every `ftuner.*` attribute name is defined once, in ir/attributes.py, and every definition is used."""
import ast
import re
from pathlib import Path

from ftuner_mlir.ir import attributes

PACKAGE = Path(attributes.__file__).resolve().parents[1]
NAME = re.compile(r"ftuner\.\w+")


def _sources():
    return [p for p in PACKAGE.rglob("*.py") if p != Path(attributes.__file__).resolve()]


def test_attribute_names_are_not_spelled_elsewhere():
    spelled = []
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and NAME.fullmatch(node.value):
                spelled.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.value}")
    assert not spelled, "attribute names belong in ir/attributes.py:\n" + "\n".join(spelled)


def test_every_attribute_is_used_and_unique():
    names = {k: v for k, v in vars(attributes).items() if k.endswith("ATTR")}
    assert len(set(names.values())) == len(names), "two constants name the same attribute"
    text = "\n".join(p.read_text() for p in _sources())
    unused = [k for k in names if not re.search(rf"\b{k}\b", text)]
    assert not unused, f"defined but never used: {unused}"


def test_scripts_name_known_attributes():
    """The transform scripts (lowering/scripts/*.mlir) match ops by ftuner attributes: each one named
    there is defined in ir/attributes.py."""
    known = {v for k, v in vars(attributes).items() if k.endswith("ATTR")}
    scripts = sorted((PACKAGE / "lowering" / "scripts").glob("*.mlir"))
    assert scripts
    named = {m for path in scripts for m in NAME.findall(path.read_text())}
    assert named and named <= known, f"unknown: {sorted(named - known)}"
