"""Elementwise consumers of a matmul dispatch run inside it: an epilogue on each cache block.

After elementwise fusion, a linear layer's bias add, the FFN's bias + GELU and a residual add are each
one linalg.generic reading a dispatch's result, often through the tensor.expand_shape that splits its
rows back into (batch, T). Run on its own it is one more pass over the whole result from memory (the
FFN's is 24 MiB at batch 16, T = 128); here it runs inside the dispatch's scf.forall, on each block
right after the block's last reduction block, while the block is still in L2, and the op is gone.

Each fused call site gets its own copy of the dispatch (`<dispatch>_ep<n>`), taking the epilogue's
other operands as extra arguments. An operand qualifies when the block's slice of it follows from the
block's rows and columns: a vector along the columns (a bias), a tensor of the result's shape (a
residual; collapsed as the result was expanded), or a 0-d tensor. Constants the body captures are
cloned into it; any other captured value, a body with regions, or a consumer that reads its own
output keeps the op where it is. A fused result can be fused again (a bias add, then a residual add).
"""
from __future__ import annotations

import dataclasses
import math

from mlir import ir
from mlir.dialects import arith, func, linalg, tensor

from ...ir.attributes import AMX_ATTR, AMX_EPILOGUE_OP_ATTR, EPILOGUE_ATTR, EPILOGUE_OP_ATTR, ZERO_INIT_ATTR
from ...ir.build import (DYNAMIC, cast, collapse_shape, empty_like, extract_slice, for_loop, index, insert_slice,
                        reassociation_groups, view_on, with_element)
from ...ir.match import affine_maps, iterator_kinds, reads_output
from ...ir.walk import ancestor_in, defining_op, enclosing_function, inside, integer_constant, ops_named
from ..llvm.merge_functions import merge_identical_functions
from ..transform import run_script
from .dispatch_calls import dispatch_functions

COLUMN, FULL, SCALAR = "column", "full", "scalar"

# vector.mask regions become masked transfers at once: a later fold puts a constant into the region,
# which then holds two ops and fails to verify
LOWER_MASKS = "func.func(lower-vector-mask)"


@dataclasses.dataclass
class Epilogue:
    call: object                 # the func.call of the dispatch
    chain: list                  # tensor.cast / tensor.expand_shape ops between the call and the consumer
    generic: object              # the elementwise consumer
    position: int                # the operand of the consumer that reads the dispatch's result
    operands: list               # (value, COLUMN | FULL | SCALAR) of the consumer's other inputs
    groups: list | None          # the expand_shape's reassociation (None: the result is read as it is)


def _reads_size(use) -> bool:
    """A tensor.dim of a constant dim: _rewrite_call_site computes it without the value."""
    return use.owner.name == "tensor.dim" and integer_constant(use.owner.operands[1]) is not None


def _single_user(value):
    """The one user of `value` other than tensor.dim ops of constant dims, and the operand it is."""
    uses = [u for u in value.uses if not _reads_size(u)]
    return (uses[0].owner, uses[0].operand_number) if len(uses) == 1 else (None, None)


def _size(value, d: int, call) -> ir.Value:
    """Dim d of `value` (the call's result, or a cast or expand_shape in the chain after it) from what
    the call reads: C's sizes are the result's, a cast keeps them, an expand_shape lists them."""
    static = ir.RankedTensorType(value.type).shape[d]
    if static != DYNAMIC:
        return index(static)
    owner = defining_op(value)
    if owner is None or owner.operation == call.operation:
        return tensor.DimOp(call.operands[2], index(d)).result
    if owner.name == "tensor.cast":
        return _size(owner.operands[0], d, call)
    shape = list(ir.DenseI64ArrayAttr(owner.attributes["static_output_shape"]))
    return list(owner.operands)[1:][sum(s == DYNAMIC for s in shape[:d])]


def _sizes_apart(values: list, call) -> None:
    """Every tensor.dim of `values` computed from what the call reads, so the values can go."""
    for value in values:
        for use in [u for u in value.uses if _reads_size(u)]:
            dim_op = use.owner
            with ir.InsertionPoint(dim_op), dim_op.location:
                size = _size(value, integer_constant(dim_op.operands[1]), call)
            dim_op.results[0].replace_all_uses_with(size)
            dim_op.erase()


def _splits_rows_only(expand) -> bool:
    """An expand_shape that splits the rows (dim 0) of a 2-D result and keeps the columns whole."""
    groups = reassociation_groups(expand)
    rank = ir.RankedTensorType(expand.results[0].type).rank
    return len(groups) == 2 and groups[1] == [rank - 1]


def _operand_kind(value, amap: ir.AffineMap, loops: int) -> str | None:
    rank = ir.RankedTensorType(value.type).rank
    if rank == 0 and len(amap.results) == 0:
        return SCALAR
    if rank == 1 and len(amap.results) == 1 and amap.results[0] == ir.AffineExpr.get_dim(loops - 1):
        return COLUMN
    if amap == ir.AffineMap.get_identity(loops):
        return FULL
    return None


# Body ops an epilogue cannot take: an index is the row generic's own, not the result's; powi's
# integer exponent has no vector form in LLVM (approximate_math expands a small constant one first).
_REFUSED_BODY_OPS = {"linalg.index", "tensor.extract", "math.fpowi", "math.ipowi"}


def _captured_ok(generic) -> bool:
    """Every value the body uses from outside it is a constant (cloned in); no op has regions or is
    one of _REFUSED_BODY_OPS."""
    body = generic.regions[0].blocks[0]
    inside = {op for op in body.operations}
    for op in body.operations:
        if len(op.regions) or op.operation.name in _REFUSED_BODY_OPS:
            return False
        for value in op.operands:
            owner = defining_op(value)
            if owner is None:
                if value.owner != body:
                    return False
            elif owner.parent != generic.operation and owner.name != "arith.constant":
                return False
    return bool(inside)


def _match(call, dispatches: dict) -> Epilogue | None:
    callee = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
    fn = dispatches.get(callee)
    if fn is None or len(call.results) != 1 or ir.RankedTensorType(call.results[0].type).rank != 2:
        return None
    value, chain, groups = call.results[0], [], None
    while True:
        user, number = _single_user(value)
        if user is None:
            return None
        if user.name == "tensor.cast" or (user.name == "tensor.expand_shape" and groups is None
                                          and _splits_rows_only(user)):
            if user.name == "tensor.expand_shape":
                groups = reassociation_groups(user)
            chain.append(user)
            value = user.results[0]
            continue
        break
    generic = user
    if generic.name != "linalg.generic" or len(generic.results) != 1:
        return None
    inputs = len(generic.operands) - 1
    if number >= inputs or any(kind != "parallel" for kind in iterator_kinds(generic)):
        return None
    maps, loops = affine_maps(generic), len(iterator_kinds(generic))
    identity = ir.AffineMap.get_identity(loops)
    out_type, value_type = ir.RankedTensorType(generic.results[0].type), ir.RankedTensorType(value.type)
    if maps[number] != identity or maps[-1] != identity or out_type.shape != value_type.shape:
        return None
    if out_type.element_type != value_type.element_type and not _narrows(fn, value_type, out_type):
        return None
    if reads_output(generic) or not _captured_ok(generic):
        return None
    operands = []
    for i in range(inputs):
        if i == number:
            continue
        kind = _operand_kind(generic.operands[i], maps[i], loops)
        if kind is None or (kind == FULL and loops != 2 and groups is None):
            return None
        operands.append((generic.operands[i], kind))
    if AMX_ATTR in fn.attributes and not _amx_vectorizable(generic):
        return None
    return Epilogue(call, chain, generic, number, operands, groups)


def _narrows(fn, value_type, out_type) -> bool:
    """A consumer that makes the fp32 result of an AMX dispatch bf16 (the rounding of the next matmul's
    operand, after GELU or a bias) can be its epilogue: the dispatch then keeps fp32 C tiles of its own
    and writes bf16 (it must start from zero: C no longer holds fp32 values to add to)."""
    return (AMX_ATTR in fn.attributes and ZERO_INIT_ATTR in fn.attributes
            and value_type.element_type == ir.F32Type.get() and out_type.element_type == ir.BF16Type.get())


def _amx_vectorizable(generic) -> bool:
    """An epilogue the AMX code runs as vector code (codegen/amx_epilogue.py): fp32 inputs, an fp32 or
    bf16 result, a body of arith and math ops that have vector forms."""
    if any(ir.RankedTensorType(v.type).element_type != ir.F32Type.get() for v in list(generic.operands)[:-1]):
        return False
    body = list(generic.regions[0].blocks[0].operations)[:-1]
    return all(op.operation.name.startswith(("arith.", "math.")) and len(op.results) == 1 for op in body)


# -- the dispatch's copy with the epilogue ---------------------------------------------------------

_EXTRA_TYPES = {COLUMN: [DYNAMIC], FULL: [DYNAMIC, DYNAMIC], SCALAR: []}


def _extra_type(kind: str, element: ir.Type) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(_EXTRA_TYPES[kind], element)


def _mixed(op, attribute: str, dynamic: list) -> list:
    """An op's static/dynamic offsets or sizes as ints and values."""
    values = iter(dynamic)
    return [next(values) if s == DYNAMIC else s for s in ir.DenseI64ArrayAttr(op.attributes[attribute])]


def _block_insert(fn):
    """The dispatch's scf.forall and the parallel_insert_slice writing each block into the result."""
    forall = next(op for op in fn.regions[0].blocks[0].operations if op.name == "scf.forall")
    terminator = list(forall.regions[0].blocks[0].operations)[-1]
    inserts = list(terminator.regions[0].blocks[0].operations)
    return forall, inserts[0] if len(inserts) == 1 else None


def _slice_offsets(insert):
    rank = len(ir.DenseI64ArrayAttr(insert.attributes["static_offsets"]))
    dynamic = list(insert.operands)[2:]
    n_offsets = sum(s == DYNAMIC for s in ir.DenseI64ArrayAttr(insert.attributes["static_offsets"]))
    offsets = _mixed(insert, "static_offsets", dynamic[:n_offsets])
    sizes = _mixed(insert, "static_sizes", dynamic[n_offsets:])
    assert len(offsets) == len(sizes) == rank
    return offsets, sizes


def _clone_body(epilogue: Epilogue, block: ir.Block, acc_arg, extra_args) -> None:
    """The consumer's body into `block`: its read of the result becomes the output argument (the block's
    accumulated values), its other inputs the block's arguments, captured constants cloned first."""
    old = epilogue.generic.regions[0].blocks[0]
    mapping, others = {}, iter(extra_args)
    for i, argument in enumerate(list(old.arguments)[:-1]):
        mapping[argument] = acc_arg if i == epilogue.position else next(others)
    with ir.InsertionPoint(block):
        for op in old.operations:
            for value in op.operands:
                owner = defining_op(value)
                if owner is not None and owner.parent != epilogue.generic.operation and value not in mapping:
                    mapping[value] = owner.clone().results[0]
            new = op.clone()
            for i, value in enumerate(new.operands):
                if value in mapping:
                    new.operands[i] = mapping[value]
            for before, after in zip(op.results, new.results):
                mapping[before] = after


def _copy_with_extras(fn, epilogue: Epilogue, name: str):
    """A copy of dispatch `fn` named `name` that also takes the epilogue's other operands: (copy, their
    arguments, their element types, the result's element type)."""
    module_block = fn.operation.parent.regions[0].blocks[0]
    with ir.InsertionPoint(module_block):
        copy = fn.operation.clone()
    copy.attributes["sym_name"] = ir.StringAttr.get(name)
    fused = ir.IntegerAttr(copy.attributes[EPILOGUE_ATTR]).value if EPILOGUE_ATTR in copy.attributes else 0
    copy.attributes[EPILOGUE_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), fused + 1)
    fn_type = ir.FunctionType(ir.TypeAttr(copy.attributes["function_type"]).value)
    element = ir.RankedTensorType(fn_type.results[0]).element_type
    elements = [ir.RankedTensorType(v.type).element_type for v, _ in epilogue.operands]
    extra_types = [_extra_type(kind, el) for (_, kind), el in zip(epilogue.operands, elements)]
    copy.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(fn_type.inputs + extra_types,
                                                                            fn_type.results))
    entry = copy.regions[0].blocks[0]
    extra_args = [entry.add_argument(t, epilogue.generic.location) for t in extra_types]
    return copy, extra_args, elements, element


# an operand's indexing in the 2-D epilogue of an AMX placeholder (rows d0, columns d1)
_AMX_MAPS = {COLUMN: "(d0, d1) -> (d1)", FULL: "(d0, d1) -> (d0, d1)", SCALAR: "(d0, d1) -> ()"}


def _add_amx_epilogue(fn, epilogue: Epilogue, name: str):
    """A copy of AMX placeholder `fn` (codegen/bf16_matmul.py: on tensors its body is the matmul itself)
    with the epilogue as a 2-D generic on the result, marked AMX_EPILOGUE_OP_ATTR: the body the AMX code
    on buffers runs on each row strip once its reduction is done (lowering/buffers/amx_bodies.py). An epilogue
    with a bf16 result (_narrows) makes C, the argument and the result, bf16: the product is then an
    fp32 temporary that the epilogue reads."""
    copy, extra_args, elements, element = _copy_with_extras(fn, epilogue, name)
    out_element = ir.RankedTensorType(epilogue.generic.results[0].type).element_type
    entry = copy.regions[0].blocks[0]
    ret = list(entry.operations)[-1]
    result = ret.operands[0]
    c = entry.arguments[2]
    inputs, maps = list(extra_args), [_AMX_MAPS[kind] for _, kind in epilogue.operands]
    if out_element != element:
        _product_apart(copy, c, out_element)
        inputs.append(result)
        maps.append(_AMX_MAPS[FULL])
    with ir.InsertionPoint(ret), epilogue.generic.location:
        parallel = ir.Attribute.parse("#linalg.iterator_type<parallel>")
        affine = [ir.Attribute.parse(f"affine_map<{m}>") for m in maps + [_AMX_MAPS[FULL]]]
        op = linalg.GenericOp([c.type], inputs, [result if out_element == element else c], ir.ArrayAttr.get(affine),
                              ir.ArrayAttr.get([parallel, parallel]))
        op.attributes[AMX_EPILOGUE_OP_ATTR] = ir.UnitAttr.get()
        types = elements + ([element] if out_element != element else []) + [out_element]
        block = op.regions[0].blocks.append(*types)
        acc = block.arguments[len(extra_args)] if out_element != element else block.arguments[-1]
        _clone_body(epilogue, block, acc, list(block.arguments)[:len(extra_args)])
    ret.operands[0] = op.result
    return copy


def _product_apart(copy, c, element: ir.Type) -> None:
    """Placeholder `copy` computes its product into a new fp32 tensor of C's shape instead of C, and C
    (argument and result) becomes of type `element`."""
    entry = copy.regions[0].blocks[0]
    with ir.InsertionPoint.at_block_begin(entry), copy.location:
        product = empty_like(c, ir.RankedTensorType(c.type).element_type)
    for use in [u for u in c.uses if u.owner.name != "tensor.dim"]:
        use.owner.operands[use.operand_number] = product
    narrow = with_element(c.type, element)
    c.set_type(narrow)
    fn_type = ir.FunctionType(ir.TypeAttr(copy.attributes["function_type"]).value)
    inputs = list(fn_type.inputs)
    inputs[2] = narrow
    copy.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, [narrow]))


def _add_epilogue(fn, epilogue: Epilogue, name: str):
    """A copy of dispatch `fn` named `name` whose blocks go through the epilogue before they are written."""
    if AMX_ATTR in fn.attributes:
        return _add_amx_epilogue(fn, epilogue, name)
    copy, extra_args, elements, element = _copy_with_extras(fn, epilogue, name)
    location = epilogue.generic.location
    forall, insert = _block_insert(copy)
    (i0, j0), (bm, bn) = _slice_offsets(insert)
    acc = insert.operands[0]
    row_type = ir.RankedTensorType.get([DYNAMIC], element)
    vector_of = [ir.RankedTensorType.get([DYNAMIC], el) for el in elements]       # an operand's row
    with ir.InsertionPoint(list(forall.regions[0].blocks[0].operations)[-1]), location:
        columns = {i: extract_slice(arg, [j0], [bn], vector_of[i])
                   for i, (arg, (_, kind)) in enumerate(zip(extra_args, epilogue.operands)) if kind == COLUMN}

        def row(r, carried):
            """Row r of the block through the epilogue: a 1-D generic (a 2-D one would broadcast the bias
            over a row tile, which masked vectorization cannot lower)."""
            ins = []
            for i, (arg, (_, kind)) in enumerate(zip(extra_args, epilogue.operands)):
                if kind == COLUMN:
                    ins.append(columns[i])
                elif kind == FULL:
                    ins.append(extract_slice(arg, [arith.AddIOp(i0, r).result, j0], [1, bn], vector_of[i]))
                else:
                    ins.append(arg)
            out = extract_slice(carried[0], [r, 0], [1, bn], row_type)
            maps = {COLUMN: "(d0) -> (d0)", FULL: "(d0) -> (d0)", SCALAR: "(d0) -> ()"}
            attrs = [ir.Attribute.parse(f"affine_map<{maps[kind]}>") for _, kind in epilogue.operands]
            identity = ir.Attribute.parse("affine_map<(d0) -> (d0)>")
            parallel = ir.Attribute.parse("#linalg.iterator_type<parallel>")
            op = linalg.GenericOp([row_type], ins, [out], ir.ArrayAttr.get(attrs + [identity]),
                                  ir.ArrayAttr.get([parallel]))
            op.attributes[EPILOGUE_OP_ATTR] = ir.UnitAttr.get()
            block = op.regions[0].blocks.append(*elements, element)
            _clone_body(epilogue, block, block.arguments[-1], list(block.arguments)[:-1])
            return [insert_slice(op.result, carried[0], [r, 0], [1, bn])]
        done = for_loop(index(0), bm, index(1), [acc], row)[0]
    insert.operands[0] = done
    return copy


def _extra_operand(value, kind: str, groups) -> ir.Value:
    """A consumer's operand as the dispatch copy takes it: 1-D or 2-D fully dynamic, or 0-d."""
    t = ir.RankedTensorType(value.type)
    if kind == SCALAR:
        return value
    if kind == FULL and groups is not None:
        shape = []
        for group in groups:
            sizes = [t.shape[d] for d in group]
            shape.append(DYNAMIC if DYNAMIC in sizes else math.prod(sizes))
        value = collapse_shape(value, groups, shape)
    return cast(value, _extra_type(kind, t.element_type))


def _rewrite_call_site(epilogue: Epilogue, name: str):
    """The copy called where the consumer was (returned: the new call); the result's casts and expand
    re-made after it."""
    generic, call = epilogue.generic, epilogue.call
    element = ir.RankedTensorType(generic.results[0].type).element_type
    with ir.InsertionPoint(generic), generic.location:
        extras = [_extra_operand(v, kind, epilogue.groups) for v, kind in epilogue.operands]
        operands, result = list(call.operands), with_element(call.results[0].type, element)
        if result != call.results[0].type:             # a narrowing epilogue: C of its element type
            operands[2] = empty_like(operands[2], element)
        fused = func.CallOp([result], ir.FlatSymbolRefAttr.get(name), operands + extras)
        value = fused.result
        for op in epilogue.chain:
            value = view_on(op, value)
    generic.results[0].replace_all_uses_with(value)
    generic.erase()
    _sizes_apart([call.results[0]] + [op.results[0] for op in epilogue.chain], call)
    for op in reversed(epilogue.chain):
        op.erase()
    call.erase()
    return fused


def fuse_epilogues(module_op, lanes: int) -> None:
    """fuse() every epilogue there is, then vectorize them `lanes` columns at a time."""
    if fuse(module_op):
        merge_identical_functions(module_op)           # the same epilogue at the same kind of site, once
        run_script("vectorize_epilogues", module_op, lanes=lanes)


def fuse(module_op) -> int:
    """Every dispatch call of a 2-D matmul family whose result feeds one elementwise consumer takes the
    consumer in as an epilogue (repeatedly: a fused call may feed another). Calls are tried in program
    order, as one walk found them: a fusion changes only its own site, so no call before it can match
    afterwards, and the fused call takes its consumer's place in the order (walking the module again
    after every fusion made this quadratic in a model's size)."""
    count, dispatches = 0, dispatch_functions(module_op)
    pending, i = ops_named(module_op, "func.call"), 0
    while True:
        if i == len(pending):                 # a last walk: the copies' bodies hold calls too
            pending, i = ops_named(module_op, "func.call"), 0
            if not any(_match(call, dispatches) for call in pending):
                return count
        found = _match(pending[i], dispatches)
        if found is None:
            i += 1
            continue
        callee = ir.FlatSymbolRefAttr(found.call.attributes["callee"]).value
        name = f"{callee}_ep{count}"
        count += 1
        dispatches[name] = _add_epilogue(dispatches[callee], found, name)
        fused = _rewrite_call_site(found, name)
        pending = _in_order(pending, i, fused)
        if pending is None:
            pending, i = ops_named(module_op, "func.call"), 0


def _in_order(pending: list, i: int, fused) -> list | None:
    """`pending` with call i (fused away) replaced by `fused`, placed before the first later call that
    follows it: in its block, or in a later function; None for a later call of its function outside
    its block (then walk again)."""
    block, function, j = fused.operation.block, enclosing_function(fused), i + 1
    while j < len(pending):
        holder = ancestor_in(pending[j], block)
        if holder is None:
            if inside(pending[j], function):
                return None
            break
        if fused.operation.is_before_in_block(holder):
            break
        j += 1
    return pending[:i] + pending[i + 1:j] + [fused] + pending[j:]
