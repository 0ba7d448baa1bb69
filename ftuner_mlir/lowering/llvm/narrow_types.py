"""Buffers of i1 stored as i8. MLIR 22's MemRefToLLVM asserts on a load or store of an element narrower
than a byte; i1 buffers come from boolean masks (`arith.cmpf` results kept in a tensor) and from the
ownership flags of the buffer-deallocation helper. Each i1 memref becomes an i8 memref; loads (scalar,
and the vector reads of a mask's row) truncate to i1 and stores zero-extend, so the values computed
stay i1."""
from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith

from ...ir.walk import walk


def _wide(t: ir.Type) -> ir.Type | None:
    """The i8 version of an i1 memref type, else None."""
    if not isinstance(t, ir.MemRefType) or str(ir.MemRefType(t).element_type) != "i1":
        return None
    m = ir.MemRefType(t)
    return ir.MemRefType.get(m.shape, ir.IntegerType.get_signless(8), m.layout, m.memory_space)


def _retype_signature(fn) -> None:
    """The function type; its entry block's arguments are retyped with every region's."""
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    inputs = [_wide(t) or t for t in ftype.inputs]
    results = [_wide(t) or t for t in ftype.results]
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, results))


def _retype_global(op) -> None:
    """A constant i1 buffer (`dense<true>` from a mask) becomes the same values as i8."""
    mtype = ir.TypeAttr(op.attributes["type"]).value
    if not _wide(mtype):
        return
    op.attributes["type"] = ir.TypeAttr.get(_wide(mtype))
    if "initial_value" in op.attributes and isinstance(op.attributes["initial_value"], ir.DenseElementsAttr):
        bits = ir.DenseIntElementsAttr(op.attributes["initial_value"])
        shape = ir.MemRefType(mtype).shape
        i8_tensor = ir.RankedTensorType.get(shape, ir.IntegerType.get_signless(8))
        if bits.is_splat:
            value = ir.IntegerAttr.get(i8_tensor.element_type, int(bits[0] != 0))
            op.attributes["initial_value"] = ir.DenseElementsAttr.get_splat(i8_tensor, value)
        else:
            values = np.array([int(bits[i] != 0) for i in range(len(bits))]).reshape(shape).tolist()
            op.attributes["initial_value"] = ir.Attribute.parse(f"dense<{values}> : {i8_tensor}")


def store_i1_as_i8(module_op) -> None:
    """Every i1 memref, as i8 (ops are visited in order, so a buffer may be retyped before its uses)."""
    i1, i8 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(8)
    for op in list(walk(module_op)):
        name = op.operation.name
        if name == "func.func":
            _retype_signature(op)
        elif name == "memref.global":
            _retype_global(op)
        for region in op.regions:              # function arguments, loop-carried buffers
            for block in region.blocks:
                for arg in block.arguments:
                    if _wide(arg.type):
                        arg.set_type(_wide(arg.type))
        if name == "memref.store" and op.operands[0].type == i1:
            with ir.InsertionPoint(op), op.location:
                op.operation.operands[0] = arith.ExtUIOp(i8, op.operands[0]).result
        for result in op.results:
            if _wide(result.type):
                result.set_type(_wide(result.type))
        if name == "memref.load" and op.results[0].type == i1:
            _read_as_bytes(op, i1, i8)
        if name == "vector.transfer_read" and _is_i1_vector(op.results[0].type):
            _read_vector_as_bytes(op)


def _read_as_bytes(op, narrow_type: ir.Type, wide_type: ir.Type) -> None:
    """`op`'s one result read as `wide_type` (bytes) and truncated back for its users."""
    result = op.results[0]
    result.set_type(wide_type)
    with ir.InsertionPoint.after(op), op.location:
        narrow = arith.TruncIOp(narrow_type, result)
    result.replace_all_uses_except(narrow.result, narrow.operation)


def _is_i1_vector(t: ir.Type) -> bool:
    return isinstance(t, ir.VectorType) and str(ir.VectorType(t).element_type) == "i1"


def _read_vector_as_bytes(op) -> None:
    """A vector of i1 read from a buffer now of i8 (a mask row, row_vectors.py): the bytes are read, the
    padding widened, and the vector truncated back to i1."""
    i8 = ir.IntegerType.get_signless(8)
    sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    padding = sizes[0] + sizes[1]
    with ir.InsertionPoint(op), op.location:
        op.operation.operands[padding] = arith.ExtUIOp(i8, op.operands[padding]).result
    shape = ir.VectorType(op.results[0].type).shape
    _read_as_bytes(op, op.results[0].type, ir.VectorType.get(shape, i8))
