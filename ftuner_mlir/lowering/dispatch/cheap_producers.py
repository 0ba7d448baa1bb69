"""Cheap elementwise producers read by several consumers are recomputed in each of them.

Upstream's elementwise fusion (linalg-fuse-elementwise-ops) fuses a producer into its consumer only when
the producer has one use, so a cast or a subtraction read by two generics is written to memory in full
and read back twice. torch-mlir's layer norm is that shape: x is widened to f64 (`extf`), read by the
mean's sum and by `x - mean`; `x - mean` is read twice by its square. At batch 16 and T = 128 each such
intermediate is a 9 MiB f64 tensor. Here each extra use of a producer whose body is a few arithmetic
ops gets a clone of its own, placed just before its consumer; the fusion that follows then folds every
clone into its consumer, and the intermediates are never stored.

A producer that reads a matmul's result (a residual add after the output projection, often past the
bias add) is left alone: epilogues.py runs it on each block inside the dispatch, where it costs no pass
of its own, and its consumers read its one stored result. Cloned into a layer norm's three reductions,
it stayed a standalone pass as well (one BERT-base layer, b16 T=119: 0.7 ms twice).
"""
from __future__ import annotations

from mlir import ir

from ...ir.match import iterator_kinds
from ...ir.walk import defining_op, walk
from .dispatch_calls import dispatch_functions

# ops cheap enough to repeat per consumer (no transcendental math: an exp twice is not cheaper than a load)
_CHEAP = {"arith.extf", "arith.truncf", "arith.addf", "arith.subf", "arith.mulf", "arith.negf", "arith.sitofp",
          "arith.uitofp", "arith.maximumf", "arith.minimumf", "arith.select", "arith.cmpf", "arith.constant",
          "linalg.yield"}
_MAX_BODY_OPS = 6
_FLOATS = (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type)


def _cheap(op) -> bool:
    if op.operation.name != "linalg.generic" or len(op.results) != 1:
        return False
    if not all(isinstance(ir.ShapedType(v.type).element_type, _FLOATS) for v in op.operands
               if isinstance(v.type, ir.ShapedType)):
        return False          # an i1 mask read in a consumer's loop keeps that loop scalar: 0.9 -> 6 ms
    if any(kind != "parallel" for kind in iterator_kinds(op)):
        return False
    body = list(op.regions[0].blocks[0].operations)
    return len(body) <= _MAX_BODY_OPS and all(inner.operation.name in _CHEAP for inner in body)


_VIEWS = ("tensor.cast", "tensor.expand_shape", "tensor.collapse_shape")
_EPILOGUE_CHAIN = 3      # elementwise ops between a matmul and a producer that still fuse as its epilogue


def _only_use_source(value):
    """The op defining `value` past views, when `value` and each view between are used once; else None."""
    while len(list(value.uses)) == 1 and (owner := defining_op(value)) is not None:
        if owner.name not in _VIEWS:
            return owner
        value = owner.operands[0]
    return None


def _reads_matmul(op, dispatches: set, depth: int = _EPILOGUE_CHAIN) -> bool:
    """Whether an input of `op` is a dispatch call's result read by nothing else, past views and
    single-use elementwise ops (a bias add): the chain epilogues.py fuses into the dispatch."""
    for value in list(op.operands)[:len(op.operands) - len(op.results)]:
        owner = _only_use_source(value)
        if owner is None:
            continue
        if owner.name == "func.call" and ir.FlatSymbolRefAttr(owner.attributes["callee"]).value in dispatches:
            return True
        if depth > 1 and owner.name == "linalg.generic" and _reads_matmul(owner, dispatches, depth - 1):
            return True
    return False


def _input_uses(value) -> list | None:
    """(consumer, operand number) of every use, when each is an input of a linalg.generic with one
    result; else None. (A multi-result reduction, softmax's max-and-argmax, runs as a scalar loop:
    work folded into it costs more than the load it saves: 0.9 -> 5.5 ms in a BERT layer.)"""
    uses = []
    for use in value.uses:
        consumer = use.owner
        if consumer.name != "linalg.generic" or len(consumer.results) != 1 \
                or use.operand_number >= len(consumer.operands) - len(consumer.results):
            return None
        uses.append((consumer, use.operand_number))
    return uses


def recompute_cheap_producers(module_op) -> None:
    dispatches = set(dispatch_functions(module_op))
    for op in [op for op in walk(module_op) if _cheap(op)]:
        if _reads_matmul(op, dispatches):
            continue
        uses = _input_uses(op.results[0])
        if uses is None or len(uses) < 2:
            continue
        for consumer, number in uses[1:]:
            clone = op.operation.clone(ip=ir.InsertionPoint(consumer))
            consumer.operands[number] = clone.results[0]
