"""Aggregate ops (linalg.softmax) decomposed into the ops they are made of
(lowering/scripts/decompose_aggregates.mlir). The softmax's division by its row sum becomes one
reciprocal per row where the row runs as vector code (lowering/loops/row_vectors.py), as it does for
torch's own decomposed softmax."""
from __future__ import annotations

from ...ir.walk import walk
from ..transform import run_script

AGGREGATED_OPS = ("linalg.softmax",)      # the ops the script matches


def decompose_aggregates(module_op) -> None:
    if any(op.operation.name in AGGREGATED_OPS for op in walk(module_op)):
        run_script("decompose_aggregates", module_op)
