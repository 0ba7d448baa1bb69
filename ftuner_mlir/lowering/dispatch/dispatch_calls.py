"""Keep each dispatch function a function of its own after bufferization.

Inlining every dispatch into its caller made the LLVM module grow with the number of matmul ops (a BERT
layer became one function of ~50,000 ops; 24 chained Dense layers, 24 copies of the same loop nest).
A dispatch is instead compiled once and called. Bufferized with fully dynamic layouts, though, its
operands would have a dynamic innermost stride, and every uKernel vector access would degrade to
scalar gathers; so each dispatch gets a unit innermost stride in its signature, which is what every
caller passes (allocations and function arguments are contiguous, and views that keep the innermost
dim of one: attention's head views of the QKV projection), and every other stride all its callers agree
on statically. A call with some operand not provably unit-stride stays inlinable, and is
compiled as before, in its caller.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import memref

from ...ir.attributes import AMX_ATTR, DISPATCH_ATTR, OUTLINED_ATTR
from ...ir.walk import defining_op, functions, walk



def dispatch_functions(module_op) -> dict:
    """name -> function, of every matmul dispatch an epilogue can join: the vector dispatches and, on
    tensors, the AMX placeholders (codegen/bf16_matmul.py)."""
    return {ir.StringAttr(fn.attributes["sym_name"]).value: fn for fn in functions(module_op)
            if DISPATCH_ATTR in fn.attributes or AMX_ATTR in fn.attributes}


def _known_strides_type(t: ir.MemRefType, roots: list[ir.MemRefType]) -> ir.MemRefType:
    """`t` with a unit innermost stride, and every other stride that all callers' buffers share as a
    static value (a micro-panel buffer's row stride nr, a weight's K): LLVM then addresses with
    constants instead of multiplying by a stride loaded from the descriptor in the uKernel loops."""
    dyn = ir.ShapedType.get_dynamic_stride_or_offset()
    known = [root.get_strides_and_offset()[0] for root in roots]
    strides = []
    for d in range(t.rank - 1):
        values = {k[d] for k in known}
        strides.append(values.pop() if len(values) == 1 and dyn not in values else dyn)
    layout = ir.StridedLayoutAttr.get(dyn, strides + [1])
    return ir.MemRefType.get(t.shape, t.element_type, layout, t.memory_space)


def _innermost_stride_is_one(t: ir.MemRefType) -> bool:
    strides, _ = t.get_strides_and_offset()
    return t.rank > 0 and strides[-1] == 1


def _contiguous_root(value: ir.Value) -> ir.Value | None:
    """The buffer behind a chain of memref.casts, when its type proves a unit innermost stride: the
    deepest such one (its type says the most: static dims give static strides)."""
    found = None
    while True:
        if _innermost_stride_is_one(ir.MemRefType(value.type)):
            found = value
        owner = defining_op(value)
        if owner is None or owner.name != "memref.cast":
            return found
        value = owner.operands[0]


# views whose innermost stride is their source's: the last dim stays the source's last (expand_shape,
# collapse_shape) or is sliced with step 1 (a subview that keeps the rank)
_INNER_STRIDE_VIEWS = {"memref.cast", "memref.expand_shape", "memref.collapse_shape", "memref.subview"}


def _unit_stride_view(value: ir.Value) -> bool:
    """`value` is a view of a unit-innermost-stride buffer that keeps that stride, though its type does
    not say so (a head view of the QKV projection: a subview of an expand_shape of a dispatch's result,
    typed with fully dynamic strides)."""
    while not _innermost_stride_is_one(ir.MemRefType(value.type)):
        owner = defining_op(value)
        if owner is None or owner.name not in _INNER_STRIDE_VIEWS:
            return False
        source = owner.operands[0]
        if owner.name == "memref.subview":
            steps = list(ir.DenseI64ArrayAttr(owner.attributes["static_strides"]))
            if ir.MemRefType(source.type).rank != ir.MemRefType(value.type).rank or steps[-1] != 1:
                return False
        value = source
    return True


def _respecialize(fn, new_types: list[ir.Type]) -> None:
    """Give the function's memref arguments `new_types`; the body sees its old types through casts."""
    block = fn.regions[0].blocks[0]
    with ir.InsertionPoint.at_block_begin(block), fn.location:
        for arg, new in zip(list(block.arguments), new_types):
            if new == arg.type:
                continue
            old = arg.type
            arg.set_type(new)
            cast = memref.CastOp(old, arg)
            arg.replace_all_uses_except(cast.result, cast.operation)
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(new_types, ftype.results))


def keep_dispatch_calls(module_op) -> None:
    """Mark calls of dispatch functions and outlined row kernels (buffers/row_kernels.py) `no_inline` and
    give the callee unit-stride operands."""
    body = module_op.regions[0].blocks[0]
    kept = {op.attributes["sym_name"].value: op for op in body.operations
            if DISPATCH_ATTR in op.attributes or OUTLINED_ATTR in op.attributes}
    by_callee: dict[str, list] = {}
    for call in (op.operation for op in walk(module_op) if op.operation.name == "func.call"):
        callee = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
        if callee in kept:
            by_callee.setdefault(callee, []).append(call)
    for name, calls in by_callee.items():
        roots = [[_root(v) for v in call.operands] for call in calls]
        if any(r is None for rs in roots for r in rs):
            continue                      # some caller passes a strided view: inline as before
        new_types = [_known_strides_type(ir.MemRefType(v.type), [ir.MemRefType(rs[i].type) for rs in roots])
                     if isinstance(v.type, ir.MemRefType) else v.type for i, v in enumerate(calls[0].operands)]
        _respecialize(kept[name], new_types)
        for call, rs in zip(calls, roots):
            with ir.InsertionPoint(call), call.location:
                for i, (root, new) in enumerate(zip(rs, new_types)):
                    if isinstance(new, ir.MemRefType):
                        call.operands[i] = memref.CastOp(new, root).result
            call.attributes["no_inline"] = ir.UnitAttr.get()


def _root(value: ir.Value) -> ir.Value | None:
    """What a kept call passes for `value`: a scalar itself, a buffer with a unit innermost stride (or a
    view keeping one); None for a strided view."""
    if not isinstance(value.type, ir.MemRefType):
        return value
    return _contiguous_root(value) or (value if _unit_stride_view(value) else None)
