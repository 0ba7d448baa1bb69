"""Transform-dialect scripts: how the phases run upstream structured transforms on the payload."""
from __future__ import annotations

from mlir import ir
from mlir.dialects.transform import interpreter


def transform_script(body: str) -> str:
    """A transform-dialect module whose entry sequence runs `body` on the payload root `%root`."""
    return ("module attributes {transform.with_named_sequence} {\n"
            "  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {\n"
            f"{body}"
            "    transform.yield\n  }\n}\n")


def apply_script(script_text: str, module_op) -> None:
    script = ir.Module.parse(script_text, module_op.context)
    interpreter.apply_named_sequence(module_op, script.body.operations[0], script)
