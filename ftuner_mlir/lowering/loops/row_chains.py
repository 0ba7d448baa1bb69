"""Chains of row ops (a softmax's mask, max, exp, sum and divide; a layer norm's mean, variance and
normalization) run as one loop over the rows, each row through every op while it is in L1.

After elementwise fusion a softmax over [16, 12, T, T] scores is still five ops, each one pass over
the whole tensor (11 MiB at T = 119: more than L2), two of them reductions whose results the next
op broadcasts back over the row. Here ops that work row by row on the same rows are grouped: a
"row op" is a generic whose loops are all parallel but the last (parallel or a reduction), each
operand read through plain dims or 0; it joins the group of a value it reads when it reads that
value's rows with its own leading loops, in order (views that only add or drop unit dims pass
through). A group with a reduction becomes one `scf.forall` over the rows; its body runs the ops on
one-row slices, in program order: elementwise results reuse the row of a value nothing reads any
more, so the row stays in one buffer, and reductions write their own small outputs. Values read
after the group are its loop's results; the others (a softmax's masked scores, its max and sum) live
in one row of their own per iteration, never in a tensor of all the rows. Small groups (fewer points
than PARALLEL_MIN_ELEMENTS) keep their ops as they were, behind an `scf.if`, as parallel_generics.py
does.

The row ops are marked ROW_CHAIN_ATTR: parallel_generics.py leaves them alone, and the reductions
among them become loops with register accumulators (row_reductions.py).
"""
from __future__ import annotations

import dataclasses

from mlir import ir
from mlir.dialects import arith, scf

from ...ir.attributes import ROW_CHAIN_ATTR, TILES_ATTR
from ...ir.build import (collapse_shape, dim, expand_shape, extract_slice, index, loop_extent, parallel_insert_slice,
                        reassociation_groups, tensor_type)
from ...ir.match import affine_maps, iterator_kinds, reads_output
from ...ir.walk import ancestor_in, public_functions, walk
from .parallel_generics import PARALLEL_MIN_ELEMENTS
from .row_reductions import carry_row_accumulators

ONE, ROW = "one", "row"        # a dim of a row value: size 1, or the row itself; row dim k is the int k
_VIEWS = ("tensor.expand_shape", "tensor.collapse_shape")


@dataclasses.dataclass(eq=False)       # members key dicts by identity: an op's own hash changes as it is edited
class RowOp:
    op: object
    leading: list           # the loops over rows, in order (static unit loops left out)
    last: int               # the loop along the row
    reduces: bool
    unit_row: bool = False  # the row loop has extent 1 (an op on per-row values: a mean from a sum)


def _static_unit_loops(op) -> set:
    units = set()
    for operand, amap in zip(op.operands, affine_maps(op)):
        for size, expr in zip(ir.ShapedType(operand.type).shape, amap.results):
            if isinstance(expr, ir.AffineDimExpr) and size == 1:
                units.add(expr.position)
    return units


def _row_op(op) -> RowOp | None:
    if op.operation.name != "linalg.generic" or len(op.results) != 1 or TILES_ATTR in op.attributes:
        return None
    if not all(isinstance(v.type, ir.RankedTensorType) for v in op.operands):
        return None
    kinds = iterator_kinds(op)
    if len(kinds) < 2 or any(k != "parallel" for k in kinds[:-1]):
        return None
    for amap in affine_maps(op):
        for expr in amap.results:
            if not (isinstance(expr, ir.AffineDimExpr) or
                    (isinstance(expr, ir.AffineConstantExpr) and expr.value == 0)):
                return None
    last = len(kinds) - 1
    units = _static_unit_loops(op)
    leading = [i for i in range(last) if i not in units]
    if not leading:
        return None
    return RowOp(op, leading, last, kinds[-1] == "reduction", last in units)


def _layout(row: RowOp, amap: ir.AffineMap) -> list | None:
    """The row layout an operand read through `amap` has: per dim, its row dim k, ONE or ROW."""
    out = []
    for expr in amap.results:
        if isinstance(expr, ir.AffineDimExpr) and expr.position in row.leading:
            out.append(row.leading.index(expr.position))
        elif isinstance(expr, ir.AffineDimExpr) and expr.position == row.last and not row.unit_row:
            out.append(ROW)
        else:
            out.append(ONE)
    return out


def _valid(layout: list | None, rows: int) -> bool:
    """Every row dim once, in order, and the row (if any) last."""
    if layout is None:
        return False
    ks = [d for d in layout if isinstance(d, int)]
    return ks == list(range(rows)) and (ROW not in layout or layout.index(ROW) == len(layout) - 1)


def _view_layout(view, source: list) -> list | None:
    """The layout of an expand_shape / collapse_shape of a row value, when it only adds or drops unit
    dims next to the row dims; else None."""
    groups = reassociation_groups(view)
    expand = view.name == "tensor.expand_shape"
    shape = ir.ShapedType((view.results[0] if expand else view.operands[0]).type).shape
    out = [None] * len(shape) if expand else []
    for number, group in enumerate(groups):
        wide = [ONE if shape[d] == 1 else None for d in group]
        if expand:
            kind = source[number]
            if kind == ONE:
                if any(w is None for w in wide):
                    return None
                for d in group:
                    out[d] = ONE
                continue
            free = [d for d, w in zip(group, wide) if w is None]
            if len(free) != 1:
                return None
            for d in group:
                out[d] = kind if d == free[0] else ONE
        else:
            kinds = [source[d] for d in group if source[d] != ONE]
            if len(kinds) > 1:
                return None
            out.append(kinds[0] if kinds else ONE)
    return out


class _Group:
    def __init__(self):
        self.members = []          # RowOps and views, in program order
        self.rows = None           # the number of row dims

    def reduces(self) -> bool:
        return any(isinstance(m, RowOp) and m.reduces for m in self.members)

    def row_ops(self) -> list:
        return [m for m in self.members if isinstance(m, RowOp)]


def _groups(block) -> list[_Group]:
    """The groups of a block's row ops, joined where one reads another's rows."""
    layout, owner = {}, {}                 # value -> its row layout, its group
    groups = []

    def merge(a: _Group, b: _Group) -> _Group:
        if a is b:
            return a
        a.members = sorted(a.members + b.members, key=lambda m: order[_op_of(m)])
        for value, g in owner.items():
            if g is b:
                owner[value] = a
        groups.remove(b)
        return a

    order = {}
    for position, op in enumerate(block.operations):
        order[op.operation] = position
        name = op.operation.name
        if name in _VIEWS and op.operands[0] in layout:
            view_layout = _view_layout(op.operation, layout[op.operands[0]])
            group = owner[op.operands[0]]
            if _valid(view_layout, group.rows):
                layout[op.results[0]], owner[op.results[0]] = view_layout, group
                group.members.append(op.operation)
            continue
        row = _row_op(op)
        if row is None or op.operands[len(op.operands) - 1] in layout:     # written into a row value: left out
            continue
        maps = affine_maps(op)
        read = [(operand, amap) for operand, amap in zip(list(op.operands)[:-1], maps[:-1]) if operand in layout]
        for v, amap in list(read):
            if owner[v].rows != len(row.leading) and not owner[v].reduces():
                _seal(owner[v], layout)     # a broadcast operand (a mask over fewer rows): read whole
                read.remove((v, amap))
        if any(layout[v] != _layout(row, amap) or owner[v].rows != len(row.leading) for v, amap in read):
            continue            # reads a row value across rows: it runs after the group, on its results
        group = _Group()
        group.rows = len(row.leading)
        group.members.append(row)
        groups.append(group)
        for operand, _ in read:
            group = merge(owner[operand], group)
        out_layout = _layout(row, maps[-1])
        if _valid(out_layout, group.rows):
            layout[op.results[0]], owner[op.results[0]] = out_layout, group
    for group in groups:
        _drop_unread_views(group)
    return [g for g in groups if g.reduces() and len(g.row_ops()) >= 2]


def _seal(group: _Group, layout: dict) -> None:
    """No later op joins `group`: its values are read as plain tensors (sliced per row), computed before
    the reader, which is after every member."""
    for member in group.members:
        layout.pop(_op_of(member).results[0], None)


def _drop_unread_views(group: _Group) -> None:
    """Views no member reads stay outside the group (what reads them reads the member they view)."""
    while True:
        read = {operand for m in group.members for operand in _op_of(m).operands}
        unread = [m for m in group.members if not isinstance(m, RowOp) and m.results[0] not in read]
        if not unread:
            return
        group.members = [m for m in group.members if m not in unread]


def _op_of(member):
    return member.op.operation if isinstance(member, RowOp) else member


def _escapes(group: _Group, block) -> dict | None:
    """Member results read after the group: value -> its readers (op, operand number). None when a
    non-member reads one before the group's last op. tensor.dim reads do not count: when the group is
    taken they are moved to the member's out operand, which has the result's shape."""
    members = {_op_of(m) for m in group.members}
    last = _op_of(group.members[-1])
    escaping, dims = {}, []
    for member in group.members:
        op = _op_of(member)
        result = op.results[0]
        for use in list(result.uses):
            user = ancestor_in(use.owner, block)
            if user in members:
                continue
            if use.owner.name == "tensor.dim" and isinstance(member, RowOp):
                dims.append((use.owner, op.operands[len(op.operands) - 1]))
                continue
            if not last.is_before_in_block(user) or not isinstance(member, RowOp):
                return None
            escaping.setdefault(result, []).append((use.owner, use.operand_number))
    for reader, out in dims:
        reader.operands[0] = out
    return escaping


def _row_type(full: ir.RankedTensorType, layout: list) -> ir.RankedTensorType:
    shape = [None if (kind == ROW and size < 0) else (size if kind == ROW else 1)
             for kind, size in zip(layout, full.shape)]
    return tensor_type(shape, full.element_type)


def _slice_by_map(value, amap, row: RowOp, ivs):
    """The part of an operand one row of `row` reads: its row dims at `ivs`, its row whole."""
    offsets, sizes = [], []
    shape = ir.ShapedType(value.type).shape
    for position, expr in enumerate(amap.results):
        if isinstance(expr, ir.AffineDimExpr) and expr.position in row.leading:
            offsets.append(ivs[row.leading.index(expr.position)])
            sizes.append(1)
        elif isinstance(expr, ir.AffineDimExpr) and expr.position == row.last:
            offsets.append(0)
            sizes.append(shape[position] if shape[position] >= 0 else dim(value, position))
        else:
            offsets.append(0 if isinstance(expr, ir.AffineDimExpr) else expr.value)
            sizes.append(1)
    static = [s if isinstance(s, int) else None for s in sizes]
    result = tensor_type(static, ir.RankedTensorType(value.type).element_type)
    return extract_slice(value, offsets, sizes, result), offsets, sizes


class _Storage:
    """A shared output of the loop: a full tensor each iteration writes one row of."""

    def __init__(self, init, amap, row: RowOp):
        self.init, self.amap, self.row = init, amap, row
        self.layout = _layout(row, amap)
        self.current = None        # the member value now held in it (an original result)
        self.argument = None       # the loop's block argument for it
        self.row_value = None      # its row in the body, as the latest member wrote it
        self.offsets = self.sizes = None    # where the row sits in it
        self.escapes = False       # a value it holds is read after the loop: a shared output; else row-local


def _plan(group: _Group, escaping: dict) -> tuple[list, dict, dict]:
    """The loop's shared outputs; per row op's result, the storage it is written to; per RowOp that
    reuses a storage, the value it overwrites there."""
    members = group.members
    last_read = {}
    for position, member in enumerate(members):
        for operand in _op_of(member).operands:
            last_read[operand] = position
    storages, where, previous = [], {}, {}
    for position, member in enumerate(members):
        if not isinstance(member, RowOp):
            continue
        op, amap = member.op, affine_maps(member.op)[-1]
        out = op.operands[len(op.operands) - 1]
        chosen = None
        if not reads_output(op):
            for storage in storages:
                held = storage.current
                if held is not None and held not in escaping and last_read.get(held, -1) <= position \
                        and storage.init.type == out.type and storage.layout == _layout(member, amap):
                    chosen = storage
                    break
        if chosen is None:
            chosen = _Storage(out, amap, member)
            storages.append(chosen)
        else:
            previous[member] = chosen.current
        chosen.current = op.results[0]
        chosen.escapes |= op.results[0] in escaping
        where[op.results[0]] = chosen
    return storages, where, previous


def _clone_row_op(member: RowOp, operands: list, result_type, ivs) -> ir.Value:
    clone = member.op.operation.clone()
    for i, value in enumerate(operands):
        clone.operands[i] = value
    clone.results[0].set_type(result_type)
    for inner in [o for o in walk(clone) if o.operation.name == "linalg.index"]:
        position = ir.IntegerAttr(inner.attributes["dim"]).value
        if position in member.leading:
            inner.results[0].replace_all_uses_with(ivs[member.leading.index(position)])
            inner.operation.erase()
    clone.attributes[ROW_CHAIN_ATTR] = ir.UnitAttr.get()
    return clone.results[0]


def _row_view(view, source_row: ir.Value, result_layout: list) -> ir.Value:
    groups = reassociation_groups(view)
    full = ir.RankedTensorType(view.results[0].type)
    if view.name == "tensor.collapse_shape":
        return collapse_shape(source_row, groups, _row_type(full, result_layout).shape)
    source_shape = ir.ShapedType(source_row.type).shape
    sizes = []
    for number, group in enumerate(groups):
        for d in group:
            if result_layout[d] == ROW:
                size = source_shape[number]
                sizes.append(size if size >= 0 else dim(source_row, number))
            else:
                sizes.append(1)
    return expand_shape(source_row, groups, sizes)


def _fused_loop(group: _Group, storages: list, where: dict, extents: list) -> list:
    """The scf.forall over the rows: every member on one row; returns its results (one per storage)."""
    shared = [s for s in storages if s.escapes]
    loop = scf.ForallOp([0] * len(extents), extents, [1] * len(extents), [s.init for s in shared])
    with ir.InsertionPoint(loop.body):
        ivs = list(loop.induction_variables)
        for storage in storages:
            storage.argument, storage.row_value = storage.init, None
        for storage, argument in zip(shared, loop.inner_iter_args):
            storage.argument = argument
        values, layouts = {}, {}
        for member in group.members:
            if not isinstance(member, RowOp):
                source = member.operands[0]
                layouts[member.results[0]] = _view_layout(member, layouts[source])
                values[member.results[0]] = _row_view(member, values[source], layouts[member.results[0]])
                continue
            op, maps = member.op, affine_maps(member.op)
            operands = []
            for operand, amap in zip(list(op.operands)[:-1], maps[:-1]):
                operands.append(values[operand] if operand in values else _slice_by_map(operand, amap, member, ivs)[0])
            storage = where[op.results[0]]
            if storage.row_value is None:
                storage.row_value, storage.offsets, storage.sizes = _slice_by_map(storage.argument, storage.amap,
                                                                                  storage.row, ivs)
            result = _clone_row_op(member, operands + [storage.row_value], storage.row_value.type, ivs)
            storage.row_value = result
            values[op.results[0]] = result
            layouts[op.results[0]] = storage.layout
        with ir.InsertionPoint(loop.terminator().block):
            for storage in shared:
                parallel_insert_slice(storage.row_value, storage.argument, storage.offsets, storage.sizes)
    results = iter(loop.results)
    return [next(results) if storage.escapes else None for storage in storages]


def _points(row: RowOp, extents: list) -> ir.Value:
    """The points of `row`'s iteration space: its row loops' `extents` times the row's length."""
    points = loop_extent(row.op, row.last)
    for extent in extents:
        points = arith.MulIOp(points, extent).result
    return points


def _fuse(group: _Group, block) -> bool:
    """The group as `scf.if (big) { the loop over rows } else { its ops as they were }`, placed after its
    last op; the values read after it are the scf.if's results."""
    escaping = _escapes(group, block)
    if escaping is None:
        return False
    storages, where, previous = _plan(group, escaping)
    escaped = list(escaping)
    first = group.row_ops()[0]
    ops = [o.operation for o in block.operations]
    anchor = ops[ops.index(_op_of(group.members[-1])) + 1]
    with ir.InsertionPoint(anchor), _op_of(group.members[-1]).location:
        extents = [loop_extent(first.op, loop) for loop in first.leading]
        big = arith.CmpIOp(arith.CmpIPredicate.uge, _points(first, extents), index(PARALLEL_MIN_ELEMENTS)).result
        choice = scf.IfOp(big, [v.type for v in escaped], has_else=True)
        with ir.InsertionPoint(choice.then_block):
            results = _fused_loop(group, storages, where, extents)
            scf.YieldOp([results[storages.index(where[v])] for v in escaped])
        with ir.InsertionPoint(choice.else_block):
            serial_yield = scf.YieldOp(escaped)
    for value, new in zip(escaped, choice.results):
        for user, number in escaping[value]:
            user.operands[number] = new
    for member in group.members:
        op = _op_of(member)
        op.move_before(serial_yield)
        if isinstance(member, RowOp):
            op.attributes[ROW_CHAIN_ATTR] = ir.UnitAttr.get()
            if member in previous:      # written over the value it replaces, as in the loop: no extra buffer
                op.operands[len(op.operands) - 1] = previous[member]
    return True


def fuse_row_chains(module_op, vector_bits: int = 0) -> None:
    """Every group of row ops with a reduction in the public functions' bodies runs as one loop over
    rows; its reductions then carry their accumulators in registers (`vector_bits` wide where they can:
    row_reductions.py)."""
    fused = False
    for fn in public_functions(module_op):
        block = fn.regions[0].blocks[0]
        for group in _groups(block):
            fused |= _fuse(group, block)
    if fused:
        carry_row_accumulators(module_op, ROW_CHAIN_ATTR, vector_bits)
