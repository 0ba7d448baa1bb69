"""Aggregate ops (linalg.softmax) decomposed into the ops they are made of
(lowering/scripts/decompose_aggregates.mlir), the softmax's normalization as ATen's vectorized softmax
computes it: each row times the reciprocal of its sum (one division a row, not one per element; a
vector division costs ~20x a multiply)."""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from ...ir.build import float_constant
from ...ir.walk import defining_op, walk
from ..transform import run_script

AGGREGATED_OPS = ("linalg.softmax",)      # the ops the script matches


def decompose_aggregates(module_op) -> None:
    if any(op.operation.name in AGGREGATED_OPS for op in walk(module_op)):
        run_script("decompose_aggregates", module_op)
        for op in [o for o in walk(module_op) if _divides_by_exp_sum(o)]:
            _times_reciprocal(op)


def _body(op) -> list:
    return list(op.regions[0].blocks[0].operations)


def _divides_by_exp_sum(op) -> bool:
    """A generic yielding in0 / in1, in1 the sum (an addf reduction) of a generic that takes an exp:
    the softmax's last part."""
    if op.operation.name != "linalg.generic" or len(op.operands) != 3:
        return False
    body = _body(op)
    args = list(op.regions[0].blocks[0].arguments)
    if len(body) != 2 or body[0].operation.name != "arith.divf" or list(body[0].operands) != args[:2]:
        return False
    total = defining_op(op.operands[1])
    if total is None or total.name != "linalg.generic" or [o.operation.name for o in _body(total)] != \
            ["arith.addf", "linalg.yield"]:
        return False
    exp = defining_op(total.operands[0])
    return exp is not None and exp.name == "linalg.generic" and any(
        o.operation.name == "math.exp" for o in _body(exp))


def _times_reciprocal(op) -> None:
    divide = _body(op)[0]
    x, total = divide.operands
    with ir.InsertionPoint(divide), divide.location:
        reciprocal = arith.DivFOp(float_constant(total.type, 1.0), total).result
        divide.results[0].replace_all_uses_with(arith.MulFOp(x, reciprocal).result)
    divide.erase()
