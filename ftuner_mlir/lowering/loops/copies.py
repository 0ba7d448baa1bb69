"""Copies the emitters mark as parallel (conv2d's im2col) tiled over the cores."""
from __future__ import annotations

from ...ir.attributes import PARALLEL_OUTER_ATTR
from ...ir.walk import walk
from ..transform import apply_script, transform_script

# Copies the emitters mark (conv2d's im2col) run over the cores: one task per index of their outermost
# dims (the attribute's value says how many: 1 or 2).
PARALLEL_COPIES = transform_script("".join(f"""\
    %copies{dims} = transform.structured.match ops{{["linalg.generic"]}}
        attributes{{{PARALLEL_OUTER_ATTR} = {dims} : i64}} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %copies{dims} : !transform.any_op {{
    ^bb0(%copy: !transform.any_op):
      %tiled, %loop = transform.structured.tile_using_forall %copy tile_sizes [{", ".join(["1"] * dims)}]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    }}
""" for dims in (1, 2)))


def parallelize_copies(module_op) -> None:
    if any(PARALLEL_OUTER_ATTR in op.attributes for op in walk(module_op)):
        apply_script(PARALLEL_COPIES, module_op)
