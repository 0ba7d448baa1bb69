"""Copies the emitters mark as parallel (conv2d's im2col) tiled over the cores
(lowering/scripts/parallelize_copies.mlir)."""
from __future__ import annotations

from ...ir.attributes import PARALLEL_OUTER_ATTR
from ...ir.walk import walk
from ..transform import run_script


def parallelize_copies(module_op) -> None:
    if any(PARALLEL_OUTER_ATTR in op.attributes for op in walk(module_op)):
        run_script("parallelize_copies", module_op)
