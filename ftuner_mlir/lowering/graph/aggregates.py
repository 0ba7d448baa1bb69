"""Aggregate ops (linalg.softmax) decomposed into the ops they are made of
(lowering/scripts/decompose_aggregates.mlir)."""
from __future__ import annotations

from ...ir.walk import walk
from ..transform import run_script

AGGREGATED_OPS = ("linalg.softmax",)      # the ops the script matches


def decompose_aggregates(module_op) -> None:
    if any(op.operation.name in AGGREGATED_OPS for op in walk(module_op)):
        run_script("decompose_aggregates", module_op)
