"""Loads and stores of bf16 (scalars, vectors, masked) as the same of i16 (LLVM dialect).

The x86 backend has no masked load or store of bfloat vectors: it splits them into one conditional
scalar access per lane, and carries each bfloat scalar as an fp32 in between, truncated back by a
call to `__truncsfbf2` (a compiler-rt helper libgcc 12 lacks: the library failed to load). The same
bits moved as i16 are one AVX512-BW masked move. The AMX packs read the edges of bf16 operands this way.
Plain loads and stores go the same way: a scalar gather loop of bf16 (a broadcast copy of attention's
operands, lowering/dispatch/early_rounding.py) was vectorized by LLVM into the same per-lane fp32 round trip.
"""
from __future__ import annotations

from mlir import ir

from ...ir.walk import ops_named

# op -> the operand holding data (None: the result)
_MEMORY = {"llvm.intr.masked.load": 2, "llvm.intr.masked.store": 0, "llvm.load": None, "llvm.store": 0}


def _as_i16(t: ir.Type) -> ir.Type | None:
    """i16, or the i16 vector of `t`'s shape, when `t` is bf16 or a vector of it; else None."""
    i16 = ir.IntegerType.get_signless(16)
    if isinstance(t, ir.BF16Type):
        return i16
    if not isinstance(t, ir.VectorType) or not isinstance(ir.VectorType(t).element_type, ir.BF16Type):
        return None
    return ir.VectorType.get(ir.VectorType(t).shape, i16)


def _bitcast(value: ir.Value, to: ir.Type) -> ir.Value:
    return ir.Operation.create("llvm.bitcast", results=[to], operands=[value]).results[0]


def bf16_memory_as_i16(module_op) -> None:
    for op in ops_named(module_op, _MEMORY):
        at = _MEMORY[op.name]
        data = op.results[0] if at is None else op.operands[at]
        wide = _as_i16(data.type)
        if wide is None:
            continue
        attributes = {named.name: named.attr for named in (op.attributes[i] for i in range(len(op.attributes)))}
        with ir.InsertionPoint(op), op.location:
            operands = list(op.operands)
            if at is not None:
                operands[at] = _bitcast(data, wide)
            results = [wide] if op.results else []
            new = ir.Operation.create(op.name, results=results, operands=operands, attributes=attributes)
            if op.results:
                op.results[0].replace_all_uses_with(_bitcast(new.results[0], op.results[0].type))
        op.erase()
