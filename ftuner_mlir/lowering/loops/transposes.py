"""The public functions' transposes as `linalg.generic`s, so big ones run over the cores with
vectorized rows like any elementwise op (parallel_generics.py); a `linalg.transpose` (attention's
head permutes, K^T) would otherwise lower to one loop nest on one core (lowering/scripts/generalize_transposes.mlir).
"""
from __future__ import annotations

from mlir import ir

from ...ir.attributes import GENERALIZE_ATTR
from ...ir.walk import public_functions, walk
from ..transform import run_script



def _mark(module_op) -> bool:
    """Mark the public functions' transposes (on tensors); True when there is any."""
    marked = False
    for fn in public_functions(module_op):
        for op in list(walk(fn)):
            if op.operation.name == "linalg.transpose" and op.results:
                op.attributes[GENERALIZE_ATTR] = ir.UnitAttr.get()
                marked = True
    return marked


def generalize_transposes(module_op) -> None:
    if _mark(module_op):
        run_script("generalize_transposes", module_op)
