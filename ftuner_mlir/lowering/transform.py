"""Transform-dialect scripts: how the phases run upstream structured transforms on the payload.

The fixed scripts are MLIR files in lowering/scripts/ (package data, parsed as they are). A size that
depends on the target (the epilogues' vector width) is written as a placeholder on an op marked
`ftuner.script_param = "<name>"`: the pass sets that op's static size list to [value] after parsing.
"""
from __future__ import annotations

import functools
from pathlib import Path

from mlir import ir
from mlir.dialects.transform import interpreter

from ..ir.attributes import SCRIPT_PARAM_ATTR
from ..ir.walk import walk

SCRIPTS = Path(__file__).with_name("scripts")
_SIZE_LISTS = {"static_sizes", "static_vector_sizes"}   # tile_using_for's, vectorize's


@functools.cache
def script_text(name: str) -> str:
    return (SCRIPTS / f"{name}.mlir").read_text()


def run_script(name: str, module_op, **params: int) -> None:
    """Run lowering/scripts/<name>.mlir on `module_op`, its marked parameters set from `params` (each
    must be given, and none other)."""
    script = ir.Module.parse(script_text(name), module_op.context)
    marked_ops = [op for op in walk(script.operation) if SCRIPT_PARAM_ATTR in op.attributes]
    marked = {ir.StringAttr(op.attributes[SCRIPT_PARAM_ATTR]).value for op in marked_ops}
    if marked != set(params):
        raise ValueError(f"script {name} takes parameters {sorted(marked)}, given {sorted(params)}")
    for op in marked_ops:
        key = ir.StringAttr(op.attributes[SCRIPT_PARAM_ATTR]).value
        for sizes in [s for s in _SIZE_LISTS if s in op.attributes]:
            op.attributes[sizes] = ir.DenseI64ArrayAttr.get([params[key]])
    _apply(script, module_op)


def transform_script(body: str) -> str:
    """A transform-dialect module whose entry sequence runs `body` on the payload root `%root` (for the
    scripts built from what a pass found: parallel_generics.tile_script)."""
    return ("module attributes {transform.with_named_sequence} {\n"
            "  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {\n"
            f"{body}"
            "    transform.yield\n  }\n}\n")


def apply_script(script_text: str, module_op) -> None:
    _apply(ir.Module.parse(script_text, module_op.context), module_op)


def _apply(script: ir.Module, module_op) -> None:
    interpreter.apply_named_sequence(module_op, script.body.operations[0], script)
