"""Give each AMX dispatch its body once it is on buffers.

The tile pass calls a placeholder for a bf16 matmul on AMX (codegen/amx_matmul.py): a function whose
body is the op itself, so the tensor passes and one-shot bufferization see plain semantics. After
bufferization its arguments are buffers (A, B, C; the result, C itself, dropped), and AMX tiles load
from and store to buffers: its body is replaced here by the AMX code, and the functions that code
calls (the pack, one per row strip size) are added. It is then a dispatch like the vector ones: kept
out of line with unit-stride operands (dispatch_calls.py), its blocks handed out dynamically.
"""
from __future__ import annotations

from mlir import ir

from ..ir.codecs import AMX_ATTR, ZERO_INIT_ATTR, amx_set_from_attr
from ..ir.diagnostics import PassFailure, location_of
from ..ir.symbols import add_functions, symbols
from ..ir.walk import functions, walk
from .dispatch_calls import DISPATCH_ATTR

USES_AMX_ATTR = "ftuner.uses_amx"     # on the module: its loader must request the AMX tile state


def build_amx_bodies(module_op, emit) -> None:
    """`emit`: the AMX emitter (codegen/amx_matmul, handed down by the pass: lowering sits below codegen).
    A module with AMX code of any origin is marked USES_AMX_ATTR."""
    present = symbols(module_op)
    for fn in [f for f in functions(module_op) if AMX_ATTR in f.attributes]:
        aset = amx_set_from_attr(fn.attributes[AMX_ATTR])
        zero_init = ZERO_INIT_ATTR in fn.attributes
        ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
        if len(ftype.inputs) != 3 or ftype.results or not all(isinstance(t, ir.MemRefType) for t in ftype.inputs):
            raise PassFailure(location_of(fn), f"AMX dispatch {fn.attributes['sym_name']} is not on buffers "
                                               f"(A, B, C) -> (): run it after bufferization")
        # each helper it lacks (dispatches of other families share the row strips, not the pack)
        for symbol, build in emit.emit_helpers(aset, zero_init).items():
            add_functions(module_op, present, symbol, lambda s=symbol, b=build: {s: b}, fn.location)
        prepacked = ir.IntegerAttr(fn.attributes[emit.PREPACKED_ATTR]).value if emit.PREPACKED_ATTR in fn.attributes else None
        emit.build_body(fn, aset, zero_init, prepacked)
        fn.attributes[DISPATCH_ATTR] = ir.StringAttr.get(aset.family)
    if any(op.operation.name.startswith("amx.") for op in walk(module_op)):
        module_op.attributes[USES_AMX_ATTR] = ir.UnitAttr.get()
