"""Masked loads and stores of bf16 vectors as the same of i16 vectors (LLVM dialect).

The x86 backend has no masked load or store of bfloat vectors: it splits them into one conditional
scalar access per lane, and carries each bfloat scalar as an fp32 in between, truncated back by a
call to `__truncsfbf2` (a compiler-rt helper libgcc 12 lacks: the library failed to load). The same
bits moved as i16 are one AVX512-BW masked move. The AMX packs read the edges of bf16 operands this way.
"""
from __future__ import annotations

from mlir import ir

from ..ir.walk import walk

_MASKED = {"llvm.intr.masked.load": 2, "llvm.intr.masked.store": 0}     # op -> the operand holding data


def _as_i16(vector_type: ir.Type) -> ir.Type | None:
    """The i16 vector of `vector_type`'s shape when its elements are bf16, else None."""
    if not isinstance(vector_type, ir.VectorType) or not isinstance(ir.VectorType(vector_type).element_type, ir.BF16Type):
        return None
    return ir.VectorType.get(ir.VectorType(vector_type).shape, ir.IntegerType.get_signless(16))


def _bitcast(value: ir.Value, to: ir.Type) -> ir.Value:
    return ir.Operation.create("llvm.bitcast", results=[to], operands=[value]).results[0]


def masked_bf16_as_i16(module_op) -> None:
    for op in [o for o in walk(module_op) if o.operation.name in _MASKED]:
        op = op.operation
        data = op.operands[_MASKED[op.name]]
        wide = _as_i16(data.type)
        if wide is None:
            continue
        attributes = {named.name: named.attr for named in (op.attributes[i] for i in range(len(op.attributes)))}
        with ir.InsertionPoint(op), op.location:
            operands = list(op.operands)
            operands[_MASKED[op.name]] = _bitcast(data, wide)
            results = [wide] if op.results else []
            new = ir.Operation.create(op.name, results=results, operands=operands, attributes=attributes)
            if op.results:
                op.results[0].replace_all_uses_with(_bitcast(new.results[0], data.type))
        op.erase()
