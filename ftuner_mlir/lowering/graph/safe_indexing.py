"""Reads that a failed assert would send out of bounds are clamped into the tensor.

`tensor.extract` with indices from data (an embedding lookup: `table[ids[i], j]`) is guarded in
torch-mlir's exports by cf.asserts; asserts are reported after the call (asserts.py), so the read runs
anyway, and an id of 10**9 would fault. Each non-constant index is clamped to [0, dim - 1]: in-bounds
reads are unchanged, out-of-bounds ones read an edge element and the call raises the assert's message.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, tensor

from ...ir.walk import defining_op, walk


def clamp_extract_indices(module_op) -> None:
    for op in [op for op in walk(module_op) if op.operation.name == "tensor.extract"]:
        source, indices = op.operands[0], list(op.operands)[1:]
        shape = ir.RankedTensorType(source.type).shape
        with ir.InsertionPoint(op), op.location:
            index = ir.IndexType.get()
            zero = arith.ConstantOp(index, 0)
            for position, (value, size) in enumerate(zip(indices, shape)):
                if getattr(defining_op(value), "name", None) == "arith.constant":
                    continue
                last = arith.ConstantOp(index, size - 1) if size >= 0 else \
                    arith.SubIOp(tensor.DimOp(source, arith.ConstantOp(index, position)).result,
                                 arith.ConstantOp(index, 1).result)
                clamped = arith.MinSIOp(arith.MaxSIOp(value, zero.result).result, last.result)
                op.operation.operands[1 + position] = clamped.result
