"""Attention's head transposes are read in place by the batch matmuls (codegen/matmul.HeadViews).

torch-mlir permutes each [B, T, H, D] projection of attention to [B, H, T, D] (K to [B, H, D, T]) with a
`linalg.transpose` and collapses it into the batch matmul's [B * H, ., .] operand: a copy of Q, K and V
per layer (at batch 16, T = 128, three 6 MiB passes; K^T's writes rows 4 B apart). A batch_matmul
dispatch whose A or B is such a collapse of a transpose calls a copy of the dispatch that slices each
(batch, head) matrix out of the untransposed tensor instead, and the transpose is gone.

The operand may come through skip_identity_broadcasts' `scf.if` (the transpose when no broadcast
happens, else the gather); the call is then versioned on the same condition:

    scf.if (cond) { the head-view dispatch on the 4-D tensors }
    else          { the operand chains as before, moved here, and the original call }

A chain qualifies only when nothing but the chain reads its values (tensor.dims of the transpose are
taken of its destination instead, which has its shape).
"""
from __future__ import annotations

import dataclasses

from mlir import ir
from mlir.dialects import arith, func, scf, tensor

from ...families.matmul import HeadViews
from ...ir.attributes import AMX_ATTR, SET_ATTR, ZERO_INIT_ATTR
from ...ir.build import cast, dim, index, reassociation_groups
from ...ir.codecs import amx_set_from_attr, ukernel_set_from_attr
from ...ir.symbols import add_functions, symbols
from ...ir.walk import defining_op, functions, inside, public_functions, walk

_HEADS_GROUPS = [[0, 1], [2], [3]]


@dataclasses.dataclass
class HeadOperand:
    source: ir.Value            # the 4-D tensor the transpose read
    perm: tuple[int, ...]       # the transpose's permutation
    condition: ir.Value | None  # the broadcast test of skip_identity_broadcasts' scf.if, if any
    chain: list                 # transpose, [scf.if], collapse_shape or reshape, [tensor.cast]: in order
    reshape: object = None      # the tensor.reshape that merges batch and heads, when no collapse_shape does


def _merges_heads(op) -> bool:
    """collapse_shape [[0, 1], [2], [3]], or a tensor.reshape from 4 dims to 3 whose last two sizes
    may be the source's (torch-mlir's view(B * H, -1, D) with the batch dynamic: its shape is computed,
    so the call is versioned on it, _merge_test)."""
    if op.name == "tensor.collapse_shape":
        return reassociation_groups(op) == _HEADS_GROUPS
    if op.name != "tensor.reshape":
        return False
    source, result = (ir.RankedTensorType(v.type) for v in (op.operands[0], op.results[0]))
    if source.rank != 4 or result.rank != 3:
        return False
    return all(ir.ShapedType.is_dynamic_size(a) or ir.ShapedType.is_dynamic_size(b) or a == b
               for a, b in zip(result.shape[1:], source.shape[2:]))


def _head_operand(value: ir.Value) -> HeadOperand | None:
    """`value` as (tensor.cast of) collapse_shape [[0, 1], [2], [3]] (or a reshape that may be one) of
    (an scf.if yielding, in its then branch,) a linalg.transpose of a 4-D tensor, all in one block, each
    value read only by the next (the transpose also by tensor.dims); else None."""
    chain = []
    op = defining_op(value)
    if op is not None and op.name == "tensor.cast":
        chain.append(op)
        op = defining_op(op.operands[0])
    if op is None or not _merges_heads(op):
        return None
    reshape = op if op.name == "tensor.reshape" else None
    chain.append(op)
    op = defining_op(op.operands[0])
    condition = None
    if op is not None and op.name == "scf.if" and len(op.results) == 1:
        then_yield = list(op.regions[0].blocks[0].operations)
        if len(then_yield) != 1:
            return None
        chain.append(op)
        condition = op.operands[0]
        op = defining_op(then_yield[0].operands[0])
    if op is None or op.name != "linalg.transpose" or len(op.results) != 1:
        return None
    chain.append(op)
    chain.reverse()
    transpose = chain[0]
    perm = tuple(ir.DenseI64ArrayAttr(transpose.attributes["permutation"]))
    if len(perm) != 4 or any(op.parent != transpose.parent for op in chain):
        return None                    # moved or erased together: they must be siblings
    for producer, consumer in zip(chain, chain[1:] + [None]):
        users = [use.owner for use in producer.results[0].uses]
        if consumer is None:
            if len(users) != 1:                # the dispatch call
                return None
            continue
        for user in users:
            if inside(user, consumer):
                continue
            if producer is transpose and user.operation.name == "tensor.dim":
                continue
            return None
    return HeadOperand(transpose.operands[0], perm, condition, chain, reshape)


def _merge_test(head: HeadOperand) -> ir.Value:
    """Whether the head operand's reshape is the collapse [[0, 1], [2], [3]]: its last two sizes (from
    its shape operand) are the transposed tensor's (its destination's); the element count then makes
    its first B * H."""
    shape, destination = head.reshape.operands[1], head.chain[0].operands[1]
    i64, same = ir.IntegerType.get_signless(64), None
    for d in (1, 2):
        size = tensor.ExtractOp(shape, [index(d)]).result
        if size.type != i64:
            size = arith.IndexCastOp(i64, size).result
        wanted = arith.IndexCastOp(i64, dim(destination, index(d + 1))).result
        equal = arith.CmpIOp(arith.CmpIPredicate.eq, size, wanted).result
        same = equal if same is None else arith.AndIOp(same, equal).result
    return same


def _dims_of_destination(transpose) -> None:
    """tensor.dims of the transpose's result outside the chain read its destination instead."""
    for use in list(transpose.results[0].uses):
        user = use.owner.operation
        if user.name == "tensor.dim" and user.operands[0] == transpose.results[0]:
            user.operands[0] = transpose.operands[1]


@dataclasses.dataclass
class HeadResult:
    perm: tuple[int, ...]       # the transpose's permutation of the [B, H, M, N] result
    heads: int                  # H (static)
    chain: list                 # tensor.cast, expand_shape, [tensor.reshape], linalg.transpose


def _single_user(value: ir.Value):
    uses = list(value.uses)
    return uses[0].owner.operation if len(uses) == 1 else None


def _head_result(call) -> HeadResult | None:
    """The call's result as (tensor.cast to) [B * H, M, N], expanded to [B, H, M, N] (H static), maybe
    reshaped to its own shape, then transposed, each value read only by the next; else None."""
    chain, op = [], _single_user(call.results[0])
    if op is not None and op.name == "tensor.cast":
        chain.append(op)
        op = _single_user(op.results[0])
    if op is None or op.name != "tensor.expand_shape" or reassociation_groups(op) != _HEADS_GROUPS:
        return None
    heads = ir.RankedTensorType(op.results[0].type).shape[1]
    if ir.ShapedType.is_dynamic_size(heads):
        return None
    chain.append(op)
    op = _single_user(op.results[0])
    if op is not None and op.name == "tensor.reshape" and _keeps_shape(op):
        chain.append(op)
        op = _single_user(op.results[0])
    if op is None or op.name != "linalg.transpose" or any(o.parent != call.parent for o in chain + [op]):
        return None
    chain.append(op)
    perm = tuple(ir.DenseI64ArrayAttr(op.attributes["permutation"]))
    return HeadResult(perm, heads, chain) if len(perm) == 4 else None


def _keeps_shape(reshape) -> bool:
    """A tensor.reshape to its source's own type with at most one dynamic dim: the same shape (the
    element count fixes that dim)."""
    source, result = (ir.RankedTensorType(v.type) for v in (reshape.operands[0], reshape.results[0]))
    return source == result and sum(ir.ShapedType.is_dynamic_size(d) for d in result.shape) <= 1


def _inverse(perm: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(perm.index(i) for i in range(len(perm)))


def _views_of(call, dispatches: dict):
    """(uKernel set, zero_init, HeadViews, heads, (A's, B's HeadOperand or None), HeadResult or None) when
    `call` calls a batch_matmul dispatch (not yet on views) with a head-view operand or result; else
    None. An AMX dispatch (a bf16 set) takes views of A and B whose matrix rows are contiguous (AMX
    tiles load rows), not of C (its result is rounded to bf16 before the transpose)."""
    fn = dispatches.get(ir.FlatSymbolRefAttr(call.attributes["callee"]).value)
    if fn is None:
        return None
    amx = AMX_ATTR in fn.attributes
    uks = amx_set_from_attr(fn.attributes[AMX_ATTR]) if amx else ukernel_set_from_attr(fn.attributes[SET_ATTR])
    if uks.family != "batch_matmul" or any(ir.RankedTensorType(t).rank != 3 for t in _inputs(fn)):
        return None
    zero_init = ZERO_INIT_ATTR in fn.attributes
    a, b = _head_operand(call.operands[0]), _head_operand(call.operands[1])
    if a is not None and a.perm[2] > a.perm[3]:
        a = None                                  # A stored columns first: not read as a view
    out = _head_result(call) if zero_init and not amx else None
    if out is not None and _inverse(out.perm)[2] > _inverse(out.perm)[3]:
        out = None
    if amx:
        readable = HeadViews(a and a.perm, b and b.perm).with_rows_in_place()
        a, b = (head if perm is not None and _heads(head) is not None else None
                for head, perm in ((a, readable.a), (b, readable.b)))
        if a is not None and b is not None and _heads(a) != _heads(b):
            b = None                              # one head count per dispatch
    if a is None and b is None and out is None:
        return None
    views = HeadViews(a and a.perm, b and b.perm, out and _inverse(out.perm))
    heads = _heads(a or b) if a or b else out.heads
    return uks, zero_init, views, heads, (a, b), out


def _heads(head: HeadOperand) -> int | None:
    """The number of heads of a head operand's tensor, when static."""
    size = ir.RankedTensorType(head.source.type).shape[head.perm[1]]
    return None if ir.ShapedType.is_dynamic_size(size) else size


def _inputs(fn) -> list:
    return ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value).inputs


def _dynamic_type(t: ir.Type) -> ir.RankedTensorType:
    t = ir.RankedTensorType(t)
    return ir.RankedTensorType.get([ir.ShapedType.get_dynamic_size()] * t.rank, t.element_type)


def _dynamic(value: ir.Value) -> ir.Value:
    return cast(value, _dynamic_type(value.type))


def _storage(out: HeadResult, init: ir.Value) -> ir.Value:
    """An empty tensor of the transposed result's type, sized from the [B * H, M, N] storage `init`."""
    result = ir.RankedTensorType(out.chain[-1].results[0].type)
    logical = [arith.DivUIOp(dim(init, index(0)), index(out.heads)).result, index(out.heads),
               dim(init, index(1)), dim(init, index(2))]
    return tensor.EmptyOp([logical[out.perm[i]] if ir.ShapedType.is_dynamic_size(d) else d
                           for i, d in enumerate(result.shape)], result.element_type).result


def _rewrite(call, callee: str, heads: tuple, out: HeadResult | None) -> None:
    """`call` becomes a call of `callee` on the head operands' 4-D tensors (writing the transposed
    result in place when `out`), versioned on their broadcast tests when they have any; the chains are
    erased or moved into the else branch. It goes where the last op of the result's chain was."""
    anchor = out.chain[-1] if out else call
    final = anchor.results[0]
    result_type = final.type
    found = [head for head in heads if head is not None]
    for head in found:
        _dims_of_destination(head.chain[0])
    with ir.InsertionPoint(anchor), call.location:
        operands = [_dynamic(head.source) if head else operand for operand, head in zip(call.operands, heads)]
        storage = _storage(out, call.operands[2]) if out else None
        operands.append(_dynamic(storage) if out else call.operands[2])

        def fast() -> ir.Value:
            called = func.CallOp([_dynamic_type(result_type)], ir.FlatSymbolRefAttr.get(callee), operands)
            return cast(called.results[0], result_type)
        conditions = [head.condition for head in found if head.condition is not None]
        conditions += [_merge_test(head) for head in found if head.reshape is not None]
        if not conditions:
            final.replace_all_uses_with(fast())
            for op in reversed([call] + (out.chain if out else [])):
                op.erase()
            for head in found:
                for op in reversed(head.chain):
                    op.erase()
            return
        condition = conditions[0]
        for other in conditions[1:]:
            condition = arith.AndIOp(condition, other).result
        if out:         # both branches write the one buffer: the result stays a plain allocation
            out.chain[-1].operands[1] = storage
        branch = scf.IfOp(condition, [result_type], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.YieldOp([fast()])
    final.replace_all_uses_with(branch.results[0])
    with ir.InsertionPoint(branch.else_block), call.location:
        otherwise = scf.YieldOp([final])
    for op in [op for head in found for op in head.chain] + [call] + (out.chain if out else []):
        op.move_before(otherwise)


def read_heads_in_place(module_op, dispatch) -> None:
    """`dispatch(uks, zero_init, views, heads)`: the dispatch's symbol and its functions' builders
    (codegen/matmul.py: dispatch_name, emit_all; for a bf16 set, codegen/bf16_matmul.py's placeholder,
    specialized on the static number of heads, None where unknown)."""
    dispatches = {ir.StringAttr(fn.attributes["sym_name"]).value: fn for fn in functions(module_op)
                  if SET_ATTR in fn.attributes or AMX_ATTR in fn.attributes}
    present = symbols(module_op)
    for fn in public_functions(module_op):
        for call in [op.operation for op in walk(fn) if op.operation.name == "func.call"]:
            found = _views_of(call, dispatches)
            if found is None:
                continue
            uks, zero_init, views, head_count, operands, out = found
            callee, builders = dispatch(uks, zero_init, views, head_count)
            add_functions(module_op, present, callee, lambda: builders, call.location)
            _rewrite(call, callee, operands, out)
