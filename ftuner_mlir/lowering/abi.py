"""Destination-passing calling convention for public functions.

`func @f(%a: tensor<?x4xf32>) -> tensor<?x4xf32>` becomes
`func @f(%a: memref<?x4xf32>, %out0: memref<?x4xf32>) attributes {llvm.emit_c_interface}`: inputs are
read through `bufferization.to_tensor restrict`, each result is materialized into its out buffer. The
caller owns every buffer, so nothing allocated inside leaks out and no result needs freeing.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import bufferization, func

from ..ir.diagnostics import PassFailure, location_of
from ..ir.walk import public_functions


def _memref_for(t: ir.Type) -> ir.Type:
    rt = ir.RankedTensorType(t)
    return ir.MemRefType.get(rt.shape, rt.element_type)


def _check_signature(fn) -> ir.FunctionType:
    blocks = len(list(fn.regions[0].blocks))
    if blocks != 1:
        raise PassFailure(location_of(fn), f"public function has {blocks} blocks; only single-block bodies "
                                           f"(structured control flow: scf.for, scf.if) are supported")
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    for kind, types in (("argument", ftype.inputs), ("result", ftype.results)):
        for i, t in enumerate(types):
            if not (isinstance(t, ir.RankedTensorType) or (kind == "argument" and isinstance(t, ir.MemRefType))):
                raise PassFailure(location_of(fn), f"public function {kind} #{i} has type {t}; only ranked "
                                                    f"tensors (and memref arguments) are supported")
    return ftype


def convert_public_functions(module_op) -> None:
    for fn in public_functions(module_op):
        with fn.location:
            _convert(fn, _check_signature(fn))


def _convert(fn, ftype: ir.FunctionType) -> None:
    block = fn.regions[0].blocks[0]
    for arg in list(block.arguments):
        if isinstance(arg.type, ir.RankedTensorType):
            tensor_type = arg.type
            arg.set_type(_memref_for(tensor_type))
            with ir.InsertionPoint.at_block_begin(block):
                as_tensor = bufferization.ToTensorOp(tensor_type, arg, restrict=True)
            arg.replace_all_uses_except(as_tensor.result, as_tensor.operation)
    ret = block.operations[len(block.operations) - 1]
    outs = [block.add_argument(_memref_for(t), fn.location) for t in ftype.results]
    with ir.InsertionPoint(ret):
        for value, out in zip(ret.operands, outs):
            bufferization.MaterializeInDestinationOp(None, value, out, restrict=True, writable=True)
        func.ReturnOp([])
    ret.operation.erase()
    inputs = [a.type for a in block.arguments]
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, []))
    fn.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
