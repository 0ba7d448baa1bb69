"""Give each AMX dispatch its body once it is on buffers.

The tile pass calls a placeholder for a bf16 matmul on AMX (codegen/bf16_matmul.py): a function whose
body is the op itself, so the tensor passes and one-shot bufferization see plain semantics. After
bufferization its arguments are buffers (A, B, C; the result, C itself, dropped), and AMX tiles load
from and store to buffers: its body is replaced here by the AMX code, and the functions that code
calls (the pack, one per row strip size) are added. It is then a dispatch like the vector ones: kept
out of line with unit-stride operands (dispatch_calls.py), its blocks handed out dynamically.
"""
from __future__ import annotations

from mlir import ir

from ...ir.attributes import (AMX_ATTR, AMX_EPILOGUE_OP_ATTR, AMX_HEAD_VIEWS_ATTR, AMX_PREPACKED_ATTR, DISPATCH_ATTR,
                              USES_AMX_ATTR, ZERO_INIT_ATTR)
from ...ir.codecs import amx_set_from_attr, head_views_from_attr
from ...ir.diagnostics import PassFailure, location_of
from ...ir.symbols import add_functions, symbols
from ...ir.walk import defining_op, functions, walk



def _argument_of(value, block) -> int | None:
    """The index of the argument of `block` that `value` is, through memref.casts."""
    while True:
        if isinstance(value, ir.BlockArgument) and value.owner == block:
            return value.arg_number
        owner = defining_op(value)
        if owner is None or owner.name != "memref.cast":
            return None
        value = owner.operands[0]


def _epilogue(fn, emit):
    """The epilogue fused into placeholder `fn` (lowering/dispatch/epilogues.py), read off its bufferized body:
    each generic marked AMX_EPILOGUE_OP_ATTR, in order, reading the extra arguments (3 on) and the
    product, and writing it in place or, the last one of a narrowing epilogue, into C (argument 2);
    None when it has none."""
    block = fn.regions[0].blocks[0]
    kinds = [emit.kind_of_rank(ir.MemRefType(a.type).rank) for a in list(block.arguments)[3:]]
    stages, product = [], None
    for op in walk(fn):
        if AMX_EPILOGUE_OP_ATTR not in op.attributes:
            continue
        op = op.operation
        out = _argument_of(op.operands[-1], block)
        if out is None:                  # writes the product in place: the epilogue of a narrowing one
            product = product or op.operands[-1]
        inputs = []
        for v in list(op.operands)[:-1]:
            at = _argument_of(v, block)
            if at is None and (product is None or v == product):
                product, at = v, 2           # the product: what the stage's C value is
            inputs.append(None if at == 2 else at - 3 if at is not None and at >= 3 else -1)
        if -1 in inputs or (out is not None and out != 2) or (out is None and op.operands[-1] != product):
            raise PassFailure(location_of(op), "an AMX epilogue must read the product and the dispatch's extra "
                                               "operands and write the product or C (bufferization copied one)")
        stages.append(emit.Stage(op.regions[0].blocks[0], inputs))
    if not stages:
        return None
    narrow = ir.MemRefType(block.arguments[2].type).element_type != ir.F32Type.get()
    return emit.AmxEpilogue(ir.StringAttr(fn.attributes["sym_name"]).value, kinds, stages, narrow)


def build_amx_bodies(module_op, emit) -> None:
    """`emit`: the AMX emitter (codegen/bf16_matmul, handed down by the pass: lowering sits below codegen).
    A module with AMX code of any origin is marked USES_AMX_ATTR."""
    present = symbols(module_op)
    for fn in [f for f in functions(module_op) if AMX_ATTR in f.attributes]:
        aset = amx_set_from_attr(fn.attributes[AMX_ATTR])
        zero_init = ZERO_INIT_ATTR in fn.attributes
        ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
        if len(ftype.inputs) < 3 or ftype.results or not all(isinstance(t, ir.MemRefType) for t in ftype.inputs):
            raise PassFailure(location_of(fn), f"AMX dispatch {fn.attributes['sym_name']} is not on buffers "
                                               f"(A, B, C, epilogue operands) -> (): run it after bufferization")
        epilogue = _epilogue(fn, emit)
        views = head_views_from_attr(fn.attributes[AMX_HEAD_VIEWS_ATTR]) if AMX_HEAD_VIEWS_ATTR in fn.attributes else None
        prepacked = ir.IntegerAttr(fn.attributes[AMX_PREPACKED_ATTR]).value if AMX_PREPACKED_ATTR in fn.attributes else None
        # each helper it lacks (dispatches of other families share the row strips, not the pack)
        for symbol, build in emit.emit_helpers(aset, zero_init, epilogue, views, prepacked).items():
            add_functions(module_op, present, symbol, lambda s=symbol, b=build: {s: b}, fn.location)
        emit.build_body(fn, aset, zero_init, prepacked, epilogue, views)
        fn.attributes[DISPATCH_ATTR] = ir.StringAttr.get(aset.family)
    if any(op.operation.name.startswith("amx.") for op in walk(module_op)):
        module_op.attributes[USES_AMX_ATTR] = ir.UnitAttr.get()
