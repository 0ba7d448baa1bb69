"""A reshape of a buffer that is contiguous after all reads it in place, without the copy bufferization put
before it.

`memref.reshape` needs a source with the identity layout. A dispatch's result is typed with a fully
dynamic layout (dispatches take strided views), so one-shot bufferization copies it into a fresh buffer
before a `tensor.reshape` (BERT, GPT-2: the attention scores [B*H, T, T] reshaped to [B, H, T, T], and
the context back: two copies of up to 12 MiB per layer). Once the dispatch calls are resolved, that
buffer is visibly an allocation of the identity layout behind a chain of casts and expand/collapse
views, or behind an scf.if that yields it from every branch (a dispatch versioned on a broadcast test,
lowering/dispatch/head_views.py; then also before a collapse_shape, GPT-2's context [B, T, H, D] -> [B*T, H*D]).
When nothing touches it after the copy, the reshape reads it directly and the copy goes.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import memref

from ...ir.walk import defining_op, look_through, ops_named

# views that keep a contiguous buffer's elements in order (a reshape of one reads the buffer itself)
_VIEWS = {"memref.cast", "memref.expand_shape", "memref.collapse_shape"}
_METADATA = {"memref.dim"} | _VIEWS
# what bufferization copies a non-contiguous buffer for: memref.reshape needs the identity layout, and
# a collapse of a buffer whose strides are unknown may not be expressible
_RESHAPES = {"memref.reshape", "memref.collapse_shape", "memref.expand_shape"}


def _aliases(root: ir.Value) -> list[ir.Value]:
    """`root` and every view made from it, transitively."""
    out, todo = [], [root]
    while todo:
        value = todo.pop()
        out.append(value)
        todo.extend(use.owner.results[0] for use in value.uses if use.owner.name in _VIEWS)
    return out


def _position_in(positions: dict, op) -> int | None:
    """The position (in `positions`: a block's ops by index) of the op that is `op` or holds it in a
    region; None if neither."""
    while op is not None:
        if op in positions:
            return positions[op]
        op = op.parent
    return None


def _untouched_after(root: ir.Value, copy, positions: dict) -> bool:
    here = _position_in(positions, copy)
    for value in _aliases(root):
        for use in value.uses:
            owner = use.owner
            if owner == copy or owner.name in _METADATA:
                continue
            where = _position_in(positions, owner)
            if where is None or where > here:
                return False
    return True


def _identity_layout(t: ir.MemRefType) -> bool:
    return isinstance(t.layout, ir.AffineMapAttr) and t.layout.value == ir.AffineMap.get_identity(t.rank)


def _root(value: ir.Value) -> ir.Value:
    """The buffer behind `value`'s views, also through an scf.if whose branches all yield that same
    buffer (a dispatch call versioned on a broadcast test, lowering/dispatch/head_views.py)."""
    value = look_through(value, _VIEWS)
    owner = defining_op(value)
    if owner is None or owner.name != "scf.if":
        return value
    position = ir.OpResult(value).result_number
    roots = {_root(list(region.blocks[0].operations)[-1].operands[position]) for region in owner.regions}
    return roots.pop() if len(roots) == 1 else value


def _rewrite(copy, positions: dict) -> None:
    """Replace `copy` by a view where it may; `positions` (its block's ops by index) follows: the view
    takes the copy's place."""
    source, target = copy.operands
    alloc = defining_op(target)
    root = _root(source)
    root_op = defining_op(root)
    if alloc is None or alloc.name != "memref.alloc" or root_op is None or root_op.name != "memref.alloc":
        return
    users = [use.owner for use in target.uses]
    reshapes = [u for u in users if u.name in _RESHAPES and u.operands[0] == target]
    if not reshapes or any(u != copy and u not in reshapes and u.name != "memref.dim" for u in users):
        return
    root_type = ir.MemRefType(root.type)
    if not _identity_layout(root_type):
        return
    same_rank = root_type.rank == ir.MemRefType(target.type).rank
    if not same_rank and any(u.name != "memref.reshape" for u in reshapes):
        return                    # only memref.reshape reads a buffer of another rank
    if not _untouched_after(root, copy, positions):
        return
    with ir.InsertionPoint(copy), copy.location:
        view = memref.CastOp(target.type, root).result if same_rank else root     # any rank reshapes
    for reshape in reshapes:
        reshape.operands[0] = view
    where = positions.pop(copy)
    if same_rank:
        positions[view.owner.operation] = where
    copy.erase()


def read_reshapes_in_place(module_op) -> None:
    positions: dict = {}                # per block, its ops by index (made once: a block lists its ops slowly)
    for copy in ops_named(module_op, "memref.copy"):
        block = copy.block
        if block not in positions:
            positions[block] = {op.operation: i for i, op in enumerate(block.operations)}
        _rewrite(copy, positions[block])
