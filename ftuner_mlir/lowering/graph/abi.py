"""Destination-passing calling convention for public functions.

`func @f(%a: tensor<?x4xf32>) -> tensor<?x4xf32>` becomes
`func @f(%a: memref<?x4xf32>, %out0: memref<?x4xf32>) attributes {llvm.emit_c_interface}`: inputs are
read through `bufferization.to_tensor restrict`, each result is materialized into its out buffer. The
caller owns every buffer, so nothing allocated inside leaks out and no result needs freeing.

A result computed by a matmul dispatch into a fresh tensor (tensor.empty) is computed in its out
buffer instead: bufferization's empty-tensor elimination does that for linalg ops, not through calls,
and the result was copied once more over the whole output (a few % of a Dense layer).
"""
from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import bufferization, func, memref

from ...ir.attributes import DISPATCH_ATTR
from ...ir.build import cast
from ...ir.diagnostics import PassFailure, location_of
from ...ir.walk import defining_op, functions, inside, look_through, public_functions


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
    dispatches = {ir.StringAttr(fn.attributes["sym_name"]).value for fn in functions(module_op)
                  if DISPATCH_ATTR in fn.attributes}
    for fn in public_functions(module_op):
        with fn.location:
            _convert(fn, _check_signature(fn), dispatches)


def _through_casts(value: ir.Value):
    """The op defining `value`, looking through tensor.casts (None for a block argument)."""
    return defining_op(look_through(value, {"tensor.cast"}))


def _fresh_destination(value: ir.Value, dispatches: set):
    """The tensor.empty a dispatch call computing `value` writes into, when nothing else reads it."""
    call = _through_casts(value)
    if call is None or call.name != "func.call" or \
            ir.FlatSymbolRefAttr(call.attributes["callee"]).value not in dispatches:
        return None
    empty = _through_casts(call.operands[2])
    if empty is None or empty.name != "tensor.empty" or len(_live_uses(empty.results[0])) != 1 \
            or len(_live_uses(call.operands[2])) != 1:
        return None
    return empty


def _live_uses(value: ir.Value) -> list:
    """Uses but the zero fill tiling left unread (the dispatch zero-initializes: canonicalize drops it)."""
    return [use for use in value.uses
            if not (use.owner.name == "linalg.fill" and not list(use.owner.results[0].uses))]


def _compute_in(out: ir.Value, empty) -> None:
    """`empty`'s uses read the out buffer instead (its contents are overwritten: the dispatch is zero-init)."""
    with ir.InsertionPoint(empty), empty.location:
        as_tensor = bufferization.ToTensorOp(ir.RankedTensorType.get(ir.MemRefType(out.type).shape,
                                                                     ir.MemRefType(out.type).element_type),
                                             out, restrict=True, writable=True)
        replacement = cast(as_tensor.result, empty.results[0].type)
    empty.results[0].replace_all_uses_with(replacement)
    empty.erase()


def _convert(fn, ftype: ir.FunctionType, dispatches: set) -> None:
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
    for value, out in zip(ret.operands, outs):
        empty = _fresh_destination(value, dispatches)
        if empty is not None:
            _compute_in(out, empty)
    ret.operation.erase()
    inputs = [a.type for a in block.arguments]
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, []))
    fn.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()


def compute_branches_in_outputs(module_op) -> None:
    """A result chosen by an scf.if (ftuner-parallelize-generics: a forall over the cores, or the plain op
    for small sizes) whose branches both write into one tensor.empty is computed in its out buffer: the
    empty-tensor elimination stops at the branch, and the result was allocated and then copied whole into
    the out buffer (a batch norm + ReLU writing a function's output: 1 of its 2 ms)."""
    for fn in public_functions(module_op):
        for op in list(fn.regions[0].blocks[0].operations):
            if op.name != "bufferization.materialize_in_destination":
                continue
            source, out = op.operands[0], op.operands[1]
            branch = _through_casts(source)
            if branch is None or branch.name != "scf.if" or not isinstance(out.type, ir.MemRefType):
                continue
            empty = _branch_destination(branch, ir.OpResult(look_through(source, {"tensor.cast"})).result_number)
            if empty is None:
                continue
            writers = [u for u in _live_uses(empty.results[0]) if u.owner.name != "tensor.dim"]
            in_branches = [u for u in writers if inside(u.owner, branch)]
            if len(in_branches) != 2:
                continue
            if len(writers) > 2:          # CSE merged it with other layers' empties: the branches get their own
                empty = _own_empty(empty, in_branches)
            _compute_in(out, empty)       # written by the two branches only (its sizes read anywhere)


def _own_empty(empty, uses: list):
    """A copy of the tensor.empty `empty` that `uses` read instead (before, the empty-tensor elimination
    gave the out buffer to one branch, which one depending on memory addresses, and the other branch's
    result was allocated and copied: the code differed from run to run)."""
    with ir.InsertionPoint(empty):
        own = empty.clone()
    for use in uses:
        use.owner.operands[use.operand_number] = own.results[0]
    return own


def _branch_destination(branch, index: int):
    """The one tensor.empty both branches of `branch` write result `index` into, else None."""
    found = {_written_into(block.operations[len(block.operations) - 1].operands[index])
             for block in (branch.regions[0].blocks[0], branch.regions[1].blocks[0])}
    empty = found.pop() if len(found) == 1 else None
    return empty if empty is not None and empty.name == "tensor.empty" else None


def _written_into(value: ir.Value):
    """The op whose tensor `value` is computed into, through destination-passing ops (a linalg op's
    outs, an scf.forall's shared_outs): a tensor.empty at the end of the chain, else what stopped it."""
    owner = _through_casts(value)
    while owner is not None and (owner.name == "scf.forall" or owner.name.startswith("linalg.")):
        results = len(owner.results)
        number = ir.OpResult(look_through(value, {"tensor.cast"})).result_number
        value = owner.operands[len(owner.operands) - results + number]
        owner = _through_casts(value)
    return owner


def drop_self_copies(module_op) -> None:
    """After bufferization: a result computed in its out buffer is then 'copied' onto itself (through a
    memref.cast, which canonicalization does not see through): the copy is dropped."""
    for fn in public_functions(module_op):
        for op in list(fn.regions[0].blocks[0].operations):
            if op.name != "memref.copy":
                continue
            source, target = (look_through(v, {"memref.cast"}) for v in op.operands)
            if source == target:
                op.erase()


ABI_SYMBOL = "ftuner_abi"


def record_abi_table(module_op) -> None:
    """The library's own description of its public functions, as a C string @ftuner_abi: per function,
    every buffer it takes (arguments, results, the call's status) as its dims and element bits,
    `name(?x768:32,2304x768:32,?x2304:32);...`. The loader checks the manifest's tables against it
    before any call: a manifest that does not describe this library is refused (runtime/loader.py)."""
    entries = []
    for fn in public_functions(module_op):
        if "llvm.emit_c_interface" not in fn.attributes:         # the runtime's helpers (profile clocks)
            continue
        ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
        buffers = [_buffer_code(ir.MemRefType(t)) for t in ftype.inputs]
        entries.append(f"{ir.StringAttr(fn.attributes['sym_name']).value}({','.join(buffers)})")
    text = ";".join(entries).encode() + b"\0"
    i8 = ir.IntegerType.get_signless(8)
    with ir.InsertionPoint.at_block_begin(module_op.regions[0].blocks[0]), module_op.location:
        memref.GlobalOp(ABI_SYMBOL, ir.TypeAttr.get(ir.MemRefType.get([len(text)], i8)), constant=True,
                        initial_value=ir.DenseElementsAttr.get(np.frombuffer(text, np.int8),
                                                               type=ir.RankedTensorType.get([len(text)], i8)))


def _buffer_code(t: ir.MemRefType) -> str:
    dims = "x".join("?" if ir.ShapedType.is_dynamic_size(d) else str(d) for d in t.shape)
    return f"{dims}:{_bits(t.element_type)}"


def _bits(element: ir.Type) -> int:
    """Bits an element takes in memory (i1 is stored as a byte, narrow_types.py)."""
    for kind in (ir.IntegerType, ir.FloatType):
        if isinstance(element, kind):
            return max(8, kind(element).width)
    raise PassFailure(None, f"public buffer of element type {element} has no width")
