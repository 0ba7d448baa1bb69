"""Emit the bf16 dispatch of a matmul (bf16 A and B, fp32 accumulation into an fp32 C) for the target's
bf16 engine: AMX tiles or AVX512-BF16 vectors (ukernel/bf16_space.py; the set's `engine`).

Two stages, because AMX tiles are loaded from and stored to buffers (the AVX512-BF16 code shares them):
- on tensors (passes/tile.py), `emit_placeholder`: a dispatch function whose body is the op itself (a
  zero fill when C starts at zero, then the `linalg.matmul`), so the tensor passes and bufferization
  see plain, correct semantics;
- on buffers (lowering/buffers/amx_bodies.py, right after bufferization), `build_body`: that body replaced by
  the engine's code, built from the set in the function's attribute.

The code runs an `scf.forall` over blocks (ukernel.bf16_space.block_shape: column blocks whose B,
packed for the whole K, stays in L2), each task with packs of its own: B's block packed into VNNI
panels of 16 columns (`emit_pack`: panel row r holds K rows 2r and 2r + 1 interleaved; rows past K and
columns past N are zeros), A's last partial K step (K % 32 columns) copied into a zero-padded 32-wide
tail, then one function per row-strip size (`emit_rows`) covers its rows: body strips of the set's
column tiles, the binary rest of full panels, then the edge panel, each C block holding the reduction
of a K chunk. The kernels: `_tile_kernel` (AMX: C tiles, the edge panel through a scratch tile; a row
strip function holds tiles of one shape, so LLVM configures the tiles once per call, `ldtilecfg`) and
`_vector_kernel` (AVX512-BF16: fp32 accumulator vectors, `vdpbf16ps` per K pair, the edge under a mask).
"""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

from mlir import ir
from mlir.dialects import arith, func, linalg, memref, scf, vector

from ..ir import amx, x86vector
from ..families.matmul import HeadViews
from ..ir.attributes import (AMX_ATTR, AMX_HEAD_VIEWS_ATTR, AMX_PACK_ATTR, AMX_PREPACKED_ATTR, AMX_ROWS_ATTR,
                             ZERO_INIT_ATTR)
from ..ir.build import (cmp, family_matmul, float_constant, for_loop, if_else, index, private_function, read_vector,
                        tensor_type, zero_vector)
from ..ir.codecs import amx_set_to_attr, head_views_to_attr
from ..ukernel.bf16_space import (K_STEP, N_TILE, TILE_ROWS, Bf16Set, block_shape, transposed_block_shape,
                                  transposed_pays)
from ..ukernel.cover import TASKS_PER_CORE, strip_bounds
from ..ukernel.space import powers_of_two_below
from .amx_epilogue import AmxEpilogue, Stage, emit_strip, extra_type, kind_of_rank  # noqa: F401 (Stage, kind_of_rank: for lowering/buffers/amx_bodies.py)
from .matmul import AR

_DYN = ir.ShapedType.get_dynamic_size()
_DYN_STRIDE = ir.ShapedType.get_dynamic_stride_or_offset()
_UGT, _EQ = arith.CmpIPredicate.ugt, arith.CmpIPredicate.eq
_WHOLE_K = 1 << 40                 # K steps: more than any K


def _z(zero: bool) -> str:
    return "_z" if zero else ""


def _engine_tag(aset: Bf16Set) -> str:
    return "amx" if aset.amx else "avx512bf16"


def dispatch_name(aset: Bf16Set, zero: bool = False, prepacked: int | None = None,
                  views: HeadViews | None = None, heads: int | None = None) -> str:
    viewed = f"{views.tag}_h{heads}" if views and views.any else ""
    return (f"ftuner_{_engine_tag(aset)}_dispatch_{aset.family}_{aset.mr}x{aset.nr}_b{aset.b_block_bytes >> 10}k"
            f"_p{aset.cores}{f'_pw{prepacked}' if prepacked else ''}{viewed}{_z(zero)}")


def rows_name(rows: int, aset: Bf16Set, zero: bool = False, epilogue: AmxEpilogue | None = None,
              transposed: bool = False) -> str:
    """A row-strip function; a batched family's runs over a group of matrices (its own signature); with
    an epilogue, its dispatch's own (named after it); `transposed`: of the transposed product (its C
    tiles read and written as C's transpose, "_ct")."""
    owner = f"_of_{epilogue.owner}" if epilogue else ""
    group = "_group" if aset.batched else ""
    ct = "_ct" if transposed else ""
    return f"ftuner_{_engine_tag(aset)}_rows_{rows}_n{aset.nr}_kc{aset.k_chunk}{group}{ct}{_z(zero)}{owner}"


def transposes(aset: Bf16Set, prepacked: int | None, epilogue: AmxEpilogue | None, views: HeadViews | None) -> bool:
    """Whether a dispatch also carries the transposed product (bf16_space.transposed_pays decides at run
    time): an AMX A.B^T whose B is packed per call, with no epilogue or head view."""
    return aset.transposable and not prepacked and epilogue is None and not (views and views.any)


def pack_name(aset: Bf16Set) -> str:
    return f"ftuner_vnni_pack_b{'t' if aset.transpose_b else ''}"


def _pack_set(aset: Bf16Set, views: HeadViews) -> Bf16Set:
    """The set whose pack reads B: a batch_matmul's B given as a head view stored columns first (K^T
    read from K) goes through the transposing pack."""
    if views.b_transposed and not aset.transpose_b:
        return dataclasses.replace(aset, family=aset.family + "_transpose_b")
    return aset


def check_views(aset: Bf16Set, views: HeadViews) -> None:
    """Head views the AMX dispatch reads: of A and B of a batch_matmul, their rows in place (the last
    dim of the 4-D tensor is the stored columns'). Raises ValueError otherwise."""
    if not views.any:
        return
    if aset.family != "batch_matmul":
        raise ValueError(f"head views apply to a batch_matmul dispatch, not {aset.family}")
    if views.c is not None:
        raise ValueError("the AMX dispatch reads no head view of C")
    if views.with_rows_in_place() != views:
        raise ValueError(f"head views {views.as_tuples()} do not all keep a matrix row in the 4-D tensor's last dim")


def _bf16() -> ir.Type:
    return ir.BF16Type.get()


def _f32() -> ir.Type:
    return ir.F32Type.get()


def operand_type(element: ir.Type, rank: int = 2) -> ir.MemRefType:
    """An operand as the AMX code reads it: dynamic sizes, rows (and batches) any stride apart, unit
    column stride."""
    return ir.MemRefType.get([_DYN] * rank, element, ir.StridedLayoutAttr.get(_DYN_STRIDE, [_DYN_STRIDE] * (rank - 1) + [1]))


def _rows_of_32() -> ir.MemRefType:
    """Panels and the A tail: rows of 32 bf16 (one 64-byte tile row), contiguous."""
    return ir.MemRefType.get([_DYN, K_STEP], _bf16())


def _panel_view() -> ir.MemRefType:
    """A task's panels: rows of 32 bf16 from some offset (of its own pack, or of a prepacked weight)."""
    return ir.MemRefType.get([_DYN, K_STEP], _bf16(), ir.StridedLayoutAttr.get(_DYN_STRIDE, [K_STEP, 1]))


def _scratch_type(aset: Bf16Set) -> ir.MemRefType:
    """The edge panel's C tiles, one above the other (rows of 16 fp32)."""
    return ir.MemRefType.get([aset.row_tiles * TILE_ROWS, N_TILE], _f32())


def emit_placeholder(aset: Bf16Set, zero_init: bool, prepacked: int | None = None, views: HeadViews | None = None,
                     heads: int | None = None):
    """(A, B, C) -> C + A.B on tensors (A.B with `zero_init`: C is only the result's storage), as a
    linalg.matmul of the family: the body `build_body` replaces once the function is on buffers. With
    `prepacked` (the panel height `half`), B is the weight's VNNI panels (codegen/weight_panels.py),
    read by a generic that indexes them as the pack laid them out. With `views` (check_views), A or B
    is a 4-D tensor whose (batch, head) slices are the batch's matrices, `heads` of them per batch
    entry; the body is then one generic over (batch, head, m, n, k) (no reshape or transpose that the
    tensor passes would rewrite)."""
    views = views or HeadViews()
    check_views(aset, views)
    if views.any and not heads:
        raise ValueError("an AMX dispatch on head views needs the static number of heads")
    rank = 3 if aset.batched else 2
    a, b = (tensor_type([None] * (4 if perm else rank), _bf16()) for perm in (views.a, views.b))
    c = tensor_type([None] * rank, _f32())

    def body(a, b, c):
        init = linalg.fill(float_constant(_f32()), outs=[c]) if zero_init else c
        if prepacked:
            return [_matmul_on_panels(a, b, init, prepacked)]
        if views.any:
            return [_matmul_on_heads(a, b, init, views, heads)]
        return [family_matmul(a, b, init, aset.family)]
    attributes = {AMX_ATTR: amx_set_to_attr(aset)}
    if zero_init:
        attributes[ZERO_INIT_ATTR] = ir.UnitAttr.get()
    if prepacked:
        attributes[AMX_PREPACKED_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), prepacked)
    if views.any:
        attributes[AMX_HEAD_VIEWS_ATTR] = head_views_to_attr(views)
    return private_function(dispatch_name(aset, zero_init, prepacked, views, heads), [a, b, c], [c], attributes, body)


def _matmul_on_heads(a: ir.Value, b: ir.Value, init: ir.Value, views: HeadViews, heads: int) -> ir.Value:
    """C[batch * heads + head, m, n] += A.B over k, where A and B are 3-D [batch * heads, ., .] or 4-D
    head views (dim perm[i] of the tensor is the i-th of (batch, head, rows, cols))."""
    batch, head, m, n, k = (ir.AffineExpr.get_dim(i) for i in range(5))
    matrix = batch * heads + head

    def operand_map(perm, rows, cols):
        if perm is None:
            return ir.AffineMap.get(5, 0, [matrix, rows, cols])
        roles = (batch, head, rows, cols)
        return ir.AffineMap.get(5, 0, [roles[perm.index(d)] for d in range(4)])
    maps = [operand_map(views.a, m, k), operand_map(views.b, k, n), ir.AffineMap.get(5, 0, [matrix, m, n])]
    return _bf16_contraction(a, b, init, maps, ["parallel"] * 4 + ["reduction"])


def _bf16_contraction(a: ir.Value, b: ir.Value, init: ir.Value, maps: list, kinds: list) -> ir.Value:
    """init + sum of a * b (bf16 operands widened, fp32 accumulation) as a generic of `maps` and
    iterator `kinds`."""
    generic = linalg.GenericOp([init.type], [a, b], [init], ir.ArrayAttr.get([ir.AffineMapAttr.get(x) for x in maps]),
                               ir.ArrayAttr.get([ir.Attribute.parse(f"#linalg.iterator_type<{t}>") for t in kinds]))
    block = generic.regions[0].blocks.append(_bf16(), _bf16(), _f32())
    with ir.InsertionPoint(block):
        x, y, acc = block.arguments
        product = arith.MulFOp(arith.ExtFOp(_f32(), x).result, arith.ExtFOp(_f32(), y).result).result
        linalg.YieldOp([arith.AddFOp(acc, product).result])
    return generic.result


def _matmul_on_panels(a: ir.Value, panels: ir.Value, init: ir.Value, half: int) -> ir.Value:
    """C[m, n] += A[m, k] * panels[(n / 16) * half + k / 2, (n % 16) * 2 + k % 2], fp32 accumulation."""
    m, n, k = (ir.AffineExpr.get_dim(i) for i in range(3))
    width, two = ir.AffineExpr.get_constant(N_TILE), ir.AffineExpr.get_constant(2)
    panel_row = ir.AffineExpr.get_add(ir.AffineExpr.get_mul(ir.AffineExpr.get_floor_div(n, width),
                                                            ir.AffineExpr.get_constant(half)),
                                      ir.AffineExpr.get_floor_div(k, two))
    panel_col = ir.AffineExpr.get_add(ir.AffineExpr.get_mul(ir.AffineExpr.get_mod(n, width), two),
                                      ir.AffineExpr.get_mod(k, two))
    maps = [ir.AffineMap.get(3, 0, exprs) for exprs in ([m, k], [panel_row, panel_col], [m, n])]
    return _bf16_contraction(a, panels, init, maps, ["parallel", "parallel", "reduction"])


def _mask(shape, sizes) -> ir.Value:
    """A vector mask of `shape` whose leading `sizes` (index values, clamped to the shape) are set."""
    return vector.CreateMaskOp(ir.VectorType.get(shape, ir.IntegerType.get_signless(1)), list(sizes)).result


def _read(width: int, element: ir.Type, source, indices, mask=None) -> ir.Value:
    """`width` elements of `source` at `indices` along its last dim, zeros where `mask` is off."""
    return read_vector(ir.VectorType.get([width], element), source, indices, float_constant(element), mask)


def _read_row_bits(source, row0, col0, r: int, cols: int, rows_left, cols_left) -> ir.Value:
    """Row r of the bf16 block at (row0, col0) as `cols` i16 (zeros past the block's edges)."""
    live = arith.SelectOp(cmp(_UGT, rows_left, index(r)), cols_left, index(0)).result
    line = _read(cols, _bf16(), source, [_add(row0, index(r)), col0], _mask([cols], [live]))
    return arith.BitcastOp(ir.VectorType.get([cols], ir.IntegerType.get_signless(16)), line).result


def _write(value: ir.Value, dest: ir.Value, indices, mask=None) -> None:
    rank = ir.MemRefType(dest.type).rank
    shape = ir.VectorType(value.type).shape
    permutation = ir.AffineMapAttr.get(ir.AffineMap.get_minor_identity(rank, len(shape)))
    in_bounds = ir.ArrayAttr.get([ir.BoolAttr.get(mask is None)] * len(shape))
    vector.TransferWriteOp(None, value, dest, list(indices), permutation, in_bounds, mask=mask)


def _add(*values) -> ir.Value:
    out = values[0]
    for v in values[1:]:
        out = arith.AddIOp(out, v).result
    return out


def _mul(x, c: int) -> ir.Value:
    return arith.MulIOp(x, index(c)).result


def emit_pack(aset: Bf16Set):
    """B's columns j0..j0+bn, all K rows (of B as K x N; of B^T as N x K) -> VNNI panels: panel p, K step
    s at panel row p * half + 16 s holds 16 columns x 32 K as [16 K pairs][16 columns x 2] (half: K
    rounded up to 32, over 2). The interior (whole panels, whole K steps) is read with plain loads, B as
    K x N two panels a row (64 bytes); the rim (the last partial K step, the panels past the interior)
    under masks: reads past B give zeros (the padding the edge tiles multiply by). A weight packed per
    call is most of a small-M product's time (Dense 16 x 768 x 2304, one thread, Sapphire Rapids: the
    pack took ~90% of the call; masks on every row and a vector.transpose made it ~2x slower)."""
    width = 1 if aset.transpose_b else 2        # panels an interior step covers

    def body(b, panels, j0, bn, kk, half):
        zero, one = index(0), index(1)
        count = arith.CeilDivUIOp(bn, index(N_TILE)).result
        steps = arith.CeilDivUIOp(kk, index(K_STEP)).result
        full_steps = arith.DivUIOp(kk, index(K_STEP)).result
        interior = _mul(arith.DivUIOp(bn, index(N_TILE * width)).result, width)    # panels
        at = _PackPlace(b, panels, j0, half)

        def steps_of(p_lo, p_hi, p_step, s_lo, s_hi, emit):
            for_loop(p_lo, p_hi, index(p_step), [],
                     lambda p, _: for_loop(s_lo, s_hi, one, [], lambda s, _: emit(p, s) or []) or [])
        plain = _pack_plain_transposed if aset.transpose_b else _pack_plain_pair
        steps_of(zero, interior, width, zero, full_steps, lambda p, s: plain(at, p, s))
        rim = lambda p, s: _pack_masked(aset, at, p, s, bn, kk)
        steps_of(zero, interior, 1, full_steps, steps, rim)
        steps_of(interior, count, 1, zero, steps, rim)
        return []
    index_type = ir.IndexType.get()
    return private_function(pack_name(aset), [operand_type(_bf16()), _panel_view()] + [index_type] * 4, [],
                            {AMX_PACK_ATTR: ir.UnitAttr.get()}, body)


class _PackPlace(NamedTuple):
    """What the pack reads and writes: B, the panels, B's first column, the panels' height."""
    b: ir.Value
    panels: ir.Value
    j0: ir.Value
    half: ir.Value

    def row(self, p, s, r: int = 0) -> ir.Value:
        """Panel p's row of K step s's K pair r."""
        return _add(arith.MulIOp(p, self.half).result, _mul(s, TILE_ROWS), index(r))

    def store(self, bits: ir.Value, p, s, r: int) -> None:
        """A 64-byte vector (16 columns' K pair r, any lane type) as panel p's row of K step s."""
        _write(vector.BitCastOp(ir.VectorType.get([K_STEP], _bf16()), bits).result, self.panels,
               [self.row(p, s, r), index(0)])


def _i16(width: int) -> ir.VectorType:
    return ir.VectorType.get([width], ir.IntegerType.get_signless(16))


def _pack_plain_pair(at: _PackPlace, p, s) -> None:
    """B as K x N, panels p and p + 1, K step s, all in B: each K pair's two rows read as 32 columns,
    interleaved, the halves written to the two panels."""
    k, col = _mul(s, K_STEP), _add(at.j0, _mul(p, N_TILE))
    for r in range(TILE_ROWS):
        pair = [arith.BitcastOp(_i16(2 * N_TILE), _read(2 * N_TILE, _bf16(), at.b, [_add(k, index(2 * r + h)), col])).result
                for h in (0, 1)]
        both = vector.InterleaveOp(*pair).result
        for h in (0, 1):
            at.store(vector.ExtractStridedSliceOp(_i16(K_STEP), both, [h * K_STEP], [K_STEP], [1]).result,
                     _add(p, index(h)) if h else p, s, r)


def _pack_plain_transposed(at: _PackPlace, p, s) -> None:
    """B^T as N x K, panel p, K step s, all in B: 16 columns' 32 K, plain loads."""
    k, col = _mul(s, K_STEP), _add(at.j0, _mul(p, N_TILE))
    _write_transposed(at, p, s, [_read(K_STEP, _bf16(), at.b, [_add(col, index(r)), k]) for r in range(N_TILE)])


def _write_transposed(at: _PackPlace, p, s, columns: list) -> None:
    """Panel p's K step s from 16 columns of 32 K each: their K pairs (as i32) transposed."""
    i32_row = ir.VectorType.get([N_TILE], ir.IntegerType.get_signless(32))
    pairs = [vector.BitCastOp(i32_row, column).result for column in columns]
    for r, row in enumerate(_transpose_16(pairs)):
        at.store(row, p, s, r)


def _transpose_16(rows: list) -> list:
    """The 16 x 16 transpose of 16 vectors of 16 lanes: four stages of two-source shuffles, stage d
    swapping bit d of the row and the lane index (64 shuffles; a vector.transpose of the block let LLVM
    rebuild every row from 16 narrowed loads and blends: the whole pack 1.5x slower)."""
    n = len(rows)
    d = 1
    while d < n:
        out = list(rows)
        for r in range(n):
            if r & d:
                continue
            low = [c if not c & d else n + (c ^ d) for c in range(n)]
            high = [c | d if not c & d else n + c for c in range(n)]
            out[r] = vector.ShuffleOp(rows[r], rows[r | d], low).result
            out[r | d] = vector.ShuffleOp(rows[r], rows[r | d], high).result
        rows, d = out, 2 * d
    return rows


def _pack_masked(aset: Bf16Set, at: _PackPlace, p, s, bn, kk) -> None:
    """Panel p, K step s, reads past B's bn columns and kk rows masked off (zeros)."""
    col, k = _mul(p, N_TILE), _mul(s, K_STEP)
    cols_left, k_left = arith.SubIOp(bn, col).result, arith.SubIOp(kk, k).result
    if aset.transpose_b:            # 16 columns x 32 K, K pairs adjacent
        _write_transposed(at, p, s, [_read_row_bits(at.b, _add(at.j0, col), k, r, K_STEP, cols_left, k_left)
                                     for r in range(N_TILE)])
        return
    # 32 K x 16 columns: interleave each pair of K rows
    rows = [_read_row_bits(at.b, k, _add(at.j0, col), r, N_TILE, k_left, cols_left) for r in range(K_STEP)]
    for r in range(N_TILE):
        at.store(vector.InterleaveOp(rows[2 * r], rows[2 * r + 1]).result, p, s, r)


class _StripOperands(NamedTuple):
    """What a row strip's kernels read: A (full K steps in place), its tail step, B's panels, C, the
    edge scratch; the block's first row and column, the panels' height, A's full K steps and whether
    a partial one follows."""
    a: ir.Value
    tail: ir.Value
    panels: ir.Value
    c: ir.Value
    scratch: ir.Value
    i0: ir.Value
    j0: ir.Value
    half: ir.Value
    full: ir.Value
    has_tail: ir.Value
    c_transposed: bool = False       # C holds the transpose of the product the strips compute


def _c_places(o: _StripOperands, narrow: bool, row_at, p, count) -> tuple[list, list]:
    """(rows, columns) in C of the kernel's row groups and panels p..p+count: a narrowing epilogue's C
    is the strip's scratch, rows and columns from the strip's corner."""
    col_at = [_mul(_add(p, index(q)) if q else p, N_TILE) for q in range(count)]
    if narrow:
        return [index(TILE_ROWS * t) for t in range(len(row_at))], col_at
    return row_at, [_add(o.j0, col) for col in col_at]


def _tile_kernel(o: _StripOperands, rows: int, zero: bool, narrow: bool, row_at, p, count, edge, s0, s1, first, last):
    """AMX: C tiles rows row_at x panels p..p+count (`edge`: the one edge panel of that many columns),
    over the K steps [s0, s1), and the tail step when `last`; C starts at zero when `zero` and `first`."""
    a, tail, panels, c, scratch, i0 = o.a, o.tail, o.panels, o.c, o.scratch, o.i0
    tile_rows = min(rows, TILE_ROWS)
    a_tile, b_tile = amx.tile_type(tile_rows, K_STEP, "bf16"), amx.tile_type(TILE_ROWS, K_STEP, "bf16")
    c_tile = amx.tile_type(tile_rows, N_TILE, "f32")
    f32, zero_i, one = _f32(), index(0), index(1)
    row_at_c, col_at = _c_places(o, narrow, row_at, p, count)

    def load_c():
        accs = []
        for t, r in enumerate(row_at_c):
            for q, col in enumerate(col_at):
                if o.c_transposed:
                    _transpose_tile_rows(c, scratch, t, tile_rows, r, col, edge)
                    accs.append(amx.tile_load(c_tile, scratch, [index(TILE_ROWS * t), zero_i]))
                    continue
                if edge is None:
                    accs.append(amx.tile_load(c_tile, c, [r, col]))
                    continue
                for row in range(tile_rows):
                    line = _read(N_TILE, f32, c, [_add(r, index(row)), col], _mask([N_TILE], [edge]))
                    _write(line, scratch, [index(TILE_ROWS * t + row), zero_i])
                accs.append(amx.tile_load(c_tile, scratch, [index(TILE_ROWS * t), zero_i]))
        return accs
    tiles = [c_tile] * (len(row_at) * count)
    accs = if_else(first, tiles, lambda: [amx.tile_zero(c_tile) for _ in tiles], load_c) if zero else load_c()
    panel_row = [arith.MulIOp(_add(p, index(q)) if q else p, o.half).result for q in range(count)]

    def multiply(accs, a_tiles, s):
        b_tiles = [amx.tile_load(b_tile, panels, [_add(base, _mul(s, TILE_ROWS)), zero_i]) for base in panel_row]
        return [amx.tile_mulf(a_tiles[n // count], b_tiles[n % count], acc) for n, acc in enumerate(accs)]

    def k_step(s, carried):
        return multiply(carried, [amx.tile_load(a_tile, a, [r, _mul(s, K_STEP)]) for r in row_at], s)
    accs = for_loop(s0, s1, one, accs, k_step)
    accs = if_else(arith.AndIOp(last, o.has_tail).result, tiles,
                   lambda: multiply(accs, [amx.tile_load(a_tile, tail, [arith.SubIOp(r, i0).result, zero_i])
                                           for r in row_at], o.full),
                   lambda: accs)
    for n, acc in enumerate(accs):
        r, col = row_at_c[n // count], col_at[n % count]
        if o.c_transposed:
            amx.tile_store(scratch, [index(TILE_ROWS * (n // count)), zero_i], acc)
            _transpose_tile_rows(scratch, c, n // count, tile_rows, r, col, edge, into_c=True)
            continue
        if edge is None:
            amx.tile_store(c, [r, col], acc)
            continue
        t = n // count
        amx.tile_store(scratch, [index(TILE_ROWS * t), zero_i], acc)
        for row in range(tile_rows):
            line = _read(N_TILE, f32, scratch, [index(TILE_ROWS * t + row), zero_i])
            _write(line, c, [_add(r, index(row)), col], _mask([N_TILE], [edge]))


def _transpose_tile_rows(source, dest, t: int, tile_rows: int, r, col, edge, into_c: bool = False) -> None:
    """Between a C tile of the transposed product (its rows r.., columns col..: C's columns and rows) and
    scratch tile t: from C into the scratch, or (`into_c`) back. C's side is read and written 16 rows
    (`edge` of them at the product's edge panel) of `tile_rows` lanes, under masks; 16 x 16 shuffled."""
    f32 = _f32()
    lanes = _mask([N_TILE], [index(tile_rows)]) if tile_rows < N_TILE else None

    def c_mask(j: int):
        if edge is None:
            return lanes
        live = arith.SelectOp(cmp(_UGT, edge, index(j)), index(tile_rows), index(0)).result
        return _mask([N_TILE], [live])
    if into_c:
        rows = [_read(N_TILE, f32, source, [index(TILE_ROWS * t + i), index(0)]) for i in range(N_TILE)]
        for j, line in enumerate(_transpose_16(rows)):
            _write(line, dest, [_add(col, index(j)), r], c_mask(j))
        return
    rows = [_read(N_TILE, f32, source, [_add(col, index(j)), r], c_mask(j)) for j in range(N_TILE)]
    for i, line in enumerate(_transpose_16(rows)):
        _write(line, dest, [index(TILE_ROWS * t + i), index(0)])


def _vector_kernel(o: _StripOperands, rows: int, zero: bool, narrow: bool, row_at, p, count, edge, s0, s1, first, last):
    """AVX512-BF16: C rows row_at[0].. + `rows` x panels p..p+count held in rows x count fp32 vectors,
    over the K steps [s0, s1) and the tail step when `last` (C starts at zero when `zero` and `first`).
    Each K pair: one B vector per panel (a panel row is 16 columns' pairs) and per row A's pair
    broadcast to the 16 lanes, then a vdpbf16ps per accumulator. The edge panel (`edge` columns) is
    read and written under a mask; its padded columns' products are zeros that go nowhere."""
    (row0,), col_at = _c_places(o, narrow, row_at, p, count)
    f32_vector = ir.VectorType.get([N_TILE], _f32())
    mask = _mask([N_TILE], [edge]) if edge is not None else None
    places = [(_add(row0, index(r)) if r else row0, col) for r in range(rows) for col in col_at]

    def load_c():
        return [_read(N_TILE, _f32(), o.c, place, mask) for place in places]
    accs = if_else(first, [f32_vector] * len(places), lambda: [zero_vector(f32_vector)] * len(places), load_c) \
        if zero else load_c()
    panel_row = [arith.MulIOp(_add(p, index(q)) if q else p, o.half).result for q in range(count)]

    def multiply(accs, a, a_row, a_col, s):
        """One K step (16 pairs) from rows a_row.. of `a`, K columns a_col.. ."""
        for pair in range(K_STEP // 2):
            b = [_read(K_STEP, _bf16(), o.panels, [_add(base, _mul(s, TILE_ROWS), index(pair)), index(0)])
                 for base in panel_row]
            for r in range(rows):
                a_pair = _broadcast_pair(a, [_add(a_row, index(r)), _add(a_col, index(2 * pair))])
                for q in range(count):
                    n = r * count + q
                    accs[n] = x86vector.dot_bf16(accs[n], a_pair, b[q])
        return accs

    accs = for_loop(s0, s1, index(1), accs, lambda s, carried: multiply(carried, o.a, row_at[0], _mul(s, K_STEP), s))
    accs = if_else(arith.AndIOp(last, o.has_tail).result, [f32_vector] * len(places),
                   lambda: multiply(list(accs), o.tail, arith.SubIOp(row_at[0], o.i0).result, index(0), o.full),
                   lambda: accs)
    for acc, place in zip(accs, places):
        _write(acc, o.c, place, mask)


def _broadcast_pair(a: ir.Value, indices) -> ir.Value:
    """The bf16 pair a[indices], a[indices + 1 column] in every 32-bit lane of a 32 x bf16 vector (a
    broadcast load: the pair moved as one i32, never through fp32)."""
    i32 = ir.IntegerType.get_signless(32)
    pair = vector.BitCastOp(ir.VectorType.get([1], i32), _read(2, _bf16(), a, indices)).result
    lanes = vector.BroadcastOp(ir.VectorType.get([N_TILE], i32), pair).result
    return vector.BitCastOp(ir.VectorType.get([K_STEP], _bf16()), lanes).result


def emit_rows(rows: int, aset: Bf16Set, zero: bool = False, epilogue: AmxEpilogue | None = None,
              transposed: bool = False):
    """C rows [lo, hi) (a multiple of `rows`), columns j0..j0+bn, += A.B over all K (= A.B with `zero`)
    from the packed panels (`half` rows each). Per strip of rows, K in chunks of the set's k_chunk (the
    strip's A chunk stays in L1 while the B panels stream from L2), and per chunk every column strip:
    body strips of the set's column tiles, one strip of each smaller power of two of full panels, then
    the edge panel (bn % 16 columns; AMX: through the scratch tiles). A's full K steps are read in place, its
    last partial step from the tail (row r - i0). With `epilogue`, each strip then goes through it
    (its extra operands follow the index arguments; a narrowing one's bf16 output after them, and C is
    then the strip's fp32 scratch, from the strip's first row and column j0). For a batched family, A
    and C hold a task's group of matrices, panels and tail their blocks one after another (two more index
    arguments: the rows of each), and the strips run for every matrix (on AMX under the call's one tile
    configuration). `transposed`: C holds the transpose of the product (AMX, no epilogue): each C tile
    goes through the scratch, transposed (_transpose_tile_rows). The kernels: _tile_kernel (AMX),
    _vector_kernel (AVX512-BF16)."""
    row_tiles = max(1, rows // TILE_ROWS) if aset.amx else 1
    f32 = _f32()
    sizes = (aset.col_tiles,) + powers_of_two_below(aset.col_tiles)
    # K steps per chunk; the transposed product's C tiles stay for the whole K (each round trip of a C
    # tile through the scratch and its transpose costs more than the A chunk falling out of L1)
    chunk = _WHOLE_K if transposed else aset.k_chunk // K_STEP

    narrow = epilogue is not None and epilogue.narrow

    def body(a, tail, panels, c, scratch, i0, lo, hi, j0, bn, kk, half, *extras):
        extras, out = (extras[:-1], extras[-1]) if narrow else (extras, None)
        zero_i, one = index(0), index(1)
        full = arith.DivUIOp(kk, index(K_STEP)).result
        steps = arith.CeilDivUIOp(kk, index(K_STEP)).result
        has_tail = cmp(_UGT, steps, full)
        panels_full = arith.DivUIOp(bn, index(N_TILE)).result
        edge_cols = arith.SubIOp(bn, _mul(panels_full, N_TILE)).result
        last_chunk = arith.SubIOp(arith.MaxUIOp(steps, one).result, one).result     # step index, rounded below
        last_chunk = _mul(arith.DivUIOp(last_chunk, index(chunk)).result, chunk)

        def run(a, tail, panels, c):
            """The strips [lo, hi) of one matrix."""
            operands = _StripOperands(a, tail, panels, c, scratch, i0, j0, half, full, has_tail, transposed)

            def kernel(row_at, *where):
                emit = _tile_kernel if aset.amx else _vector_kernel
                emit(operands, rows, zero, narrow, row_at, *where)

            def strip(i, _):
                row_at = [_add(i, index(TILE_ROWS * t)) for t in range(row_tiles)]
                for_loop(zero_i, arith.MaxUIOp(steps, one).result, index(chunk), [], lambda s0, _: k_chunk(row_at, s0) or [])
                if epilogue is not None:            # the strip is final: through the epilogue while in L2
                    emit_strip(epilogue, c, list(extras), i, _add(i, index(rows)), j0, bn, out)
                return []

            def k_chunk(row_at, s0):
                s1 = arith.MinUIOp(_add(s0, index(chunk)), full).result          # the chunk's full steps: [s0, s1)
                first, last = cmp(_EQ, s0, zero_i), cmp(_EQ, s0, last_chunk)
                for count, p_lo, p_hi in strip_bounds(panels_full, sizes, ar=AR):
                    for_loop(p_lo, p_hi, index(count), [],
                             lambda p, _, count=count: kernel(row_at, p, count, None, s0, s1, first, last) or [])
                scf_if = scf.IfOp(cmp(_UGT, edge_cols, zero_i))
                with ir.InsertionPoint(scf_if.then_block):
                    kernel(row_at, panels_full, 1, edge_cols, s0, s1, first, last)
                    scf.YieldOp([])

            for_loop(lo, hi, index(rows), [], strip)

        if not aset.batched:
            run(a, tail, panels, c)
            return []
        # batched: every matrix of the task's group, under this call's one tile configuration; each
        # has its panels (panel_rows rows) and tail (tail_rows rows) one after another
        panel_rows, tail_rows = extras
        for_loop(zero_i, memref.DimOp(c, zero_i).result, one, [], lambda m, _: run(
            _matrix(a, m), _block_of(tail, m, tail_rows), _block_of(panels, m, panel_rows), _matrix(c, m)) or [])
        return []
    index_type = ir.IndexType.get()
    if aset.batched:              # the group's matrices; their panels' and tails' rows each
        inputs = [operand_type(_bf16(), 3), _panel_view(), _panel_view(), operand_type(f32, 3), _scratch_type(aset)]
        extras = [index_type, index_type]
    else:
        inputs = [operand_type(_bf16()), _rows_of_32(), _panel_view(), operand_type(f32), _scratch_type(aset)]
        extras = [extra_type(kind) for kind in epilogue.kinds] if epilogue else []
    extras += [operand_type(_bf16())] if narrow else []
    fn = private_function(rows_name(rows, aset, zero, epilogue, transposed), inputs + [index_type] * 7 + extras, [],
                          {AMX_ROWS_ATTR: ir.IntegerAttr.get(ir.IntegerType.get_signless(64), rows)}, body)
    fn.attributes["no_inline"] = ir.UnitAttr.get()       # one tile configuration per call: never merged
    return fn


def emit_helpers(aset: Bf16Set, zero_init: bool, epilogue: AmxEpilogue | None = None,
                 views: HeadViews | None = None, prepacked: int | None = None) -> dict:
    """symbol name -> builder of each function the buffer-level dispatch calls."""
    packer = _pack_set(aset, views or HeadViews())
    funcs = {pack_name(packer): lambda: emit_pack(packer)}
    for rows in aset.row_sizes:
        funcs[rows_name(rows, aset, zero_init, epilogue)] = lambda r=rows: emit_rows(r, aset, zero_init, epilogue)
        if transposes(aset, prepacked, epilogue, views):
            funcs[rows_name(rows, aset, zero_init, transposed=True)] = \
                lambda r=rows: emit_rows(r, aset, zero_init, transposed=True)
    return funcs


def _row_strips(bm: ir.Value, aset: Bf16Set) -> list[tuple]:
    """(rows, lo, hi, taken) per row strip function of a block of `bm` rows: body strips of mr, then the
    remainder strips (bf16_space.Bf16Set.row_sizes: binary digits, or for a batched family 16-row strips
    and the rest below 16 by the strip of exactly that many rows)."""
    if not aset.exact_rests:
        return [(rows, lo, hi, cmp(_UGT, hi, lo)) for rows, lo, hi in strip_bounds(bm, aset.row_sizes, ar=AR)]
    sixteen = index(TILE_ROWS)
    rest = arith.RemUIOp(bm, sixteen).result
    body_hi = arith.SubIOp(bm, arith.RemUIOp(bm, index(aset.mr)).result).result
    rest_lo = arith.SubIOp(bm, rest).result
    strips = [(aset.mr, index(0), body_hi, cmp(_UGT, body_hi, index(0)))]
    if aset.mr > TILE_ROWS:
        strips.append((TILE_ROWS, body_hi, rest_lo, cmp(_UGT, rest_lo, body_hi)))
    strips += [(r, rest_lo, bm, cmp(_EQ, rest, index(r))) for r in aset.row_sizes if r < TILE_ROWS]
    return strips


def _call(name: str, operands) -> None:
    call = func.CallOp([], ir.FlatSymbolRefAttr.get(name), list(operands))
    call.attributes["no_inline"] = ir.UnitAttr.get()


def _block_of(rows_of_32: ir.Value, at: ir.Value, rows: ir.Value) -> ir.Value:
    """Block `at` of `rows` rows each of a buffer of 32-bf16 rows (a group's panels or A tails)."""
    return memref.subview(rows_of_32, [arith.MulIOp(at, rows).result, 0], [rows, K_STEP], [1, 1],
                          result_type=_panel_view())


def _matrix(operand: ir.Value, at: ir.Value) -> ir.Value:
    """Matrix `at` of a batched operand, as a 2-D view."""
    t = ir.MemRefType(operand.type)
    sizes = [1] + [memref.DimOp(operand, index(d)).result for d in (1, 2)]
    return memref.subview(operand, [at, 0, 0], sizes, [1, 1, 1], result_type=operand_type(t.element_type))


def _alloc(memref_type: ir.MemRefType, sizes: list) -> ir.Value:
    aligned = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 64)
    return memref.AllocOp(memref_type, sizes, [], alignment=aligned).result


def _group(aset: Bf16Set, batch: ir.Value, nc: ir.Value, half: ir.Value) -> ir.Value:
    """Matrices a batched task takes: TASKS_PER_CORE groups per core, as many as keep the group's packed
    B blocks within b_block_bytes (each row-strip call, which configures the tiles, then serves the
    whole group; a small matrix paid that per matrix)."""
    per_matrix = _mul(arith.MulIOp(arith.CeilDivUIOp(nc, index(N_TILE)).result, half).result, 2 * K_STEP)
    fits = arith.DivUIOp(index(aset.b_block_bytes), per_matrix).result
    wanted = arith.DivUIOp(batch, index(TASKS_PER_CORE * aset.cores)).result
    return arith.MaxUIOp(arith.MinUIOp(wanted, fits).result, index(1)).result


def _tail_of(a: ir.Value, tail: ir.Value, i0, bm, k) -> None:
    """A's last partial K step of rows i0..i0+bm, zero-padded to 32, into `tail` (row r - i0)."""
    zero, one = index(0), index(1)
    full_k = _mul(arith.DivUIOp(k, index(K_STEP)).result, K_STEP)
    rest = arith.SubIOp(k, full_k).result
    scf_if = scf.IfOp(cmp(_UGT, rest, zero))
    with ir.InsertionPoint(scf_if.then_block):
        for_loop(zero, bm, one, [], lambda r, _: _write(
            _read(K_STEP, _bf16(), a, [_add(i0, r), full_k], _mask([K_STEP], [rest])), tail, [r, zero]) or [])
        scf.YieldOp([])


def _strip_calls(aset: Bf16Set, zero_init: bool, epilogue, bm, operands, block_args, after,
                 transposed: bool = False) -> None:
    """One call per row strip function that has rows in the block (each configures the tiles)."""
    i0 = block_args[0]
    for rows, lo, hi, taken in _row_strips(bm, aset):
        some = scf.IfOp(taken)
        with ir.InsertionPoint(some.then_block):
            _call(rows_name(rows, aset, zero_init, epilogue, transposed),
                  operands + [i0, _add(i0, lo), _add(i0, hi), *block_args[1:]] + after)
            scf.YieldOp([])


def _block(aset, zero_init, a, b, c, scratch, prepacked, epilogue, extras, panel_rows, block,
           transposed: bool = False) -> None:
    """A 2-D product's task: its block of C from A and its B block (packed here, or the prepacked
    weight's panels read in place); `transposed`: C holds the product's transpose."""
    i0, j0, bm, bn, k, half = block
    if prepacked:                 # this task's panels: the weight's from its first column's on
        first = arith.MulIOp(arith.DivUIOp(j0, index(N_TILE)).result, half).result
        panels = memref.subview(b, [first, 0], [panel_rows, K_STEP], [1, 1], result_type=_panel_view())
    else:
        panels = memref.CastOp(_panel_view(), _alloc(_rows_of_32(), [panel_rows])).result
        _call(pack_name(aset), [b, panels, j0, bn, k, half])
    tail = _alloc(_rows_of_32(), [bm])
    _tail_of(a, tail, i0, bm, k)
    narrow = epilogue is not None and epilogue.narrow
    c_strip = c                   # a narrowing epilogue: fp32 C tiles for one strip at a time
    if narrow:
        strip_type = ir.MemRefType.get([aset.mr, _DYN], _f32())
        c_strip = memref.CastOp(operand_type(_f32()), _alloc(strip_type, [bn])).result
    _strip_calls(aset, zero_init, epilogue, bm, [a, tail, panels, c_strip, scratch], [i0, j0, bn, k, half],
                 list(extras) + ([c] if narrow else []), transposed)


def _group_block(aset, zero_init, pack: str, groups, scratch, count, panel_rows, block) -> None:
    """A batched task: the same block of `count` matrices (`groups`: A's, B's and C's as 3-D views, B
    stored as the pack reads it). Every matrix's B block is packed and A tail made first, one after
    another in the group's buffers; then each row strip function runs over the whole group."""
    i0, j0, bm, bn, k, half = block
    a_group, b_group, c_group = groups
    zero, one = index(0), index(1)
    panels = memref.CastOp(_panel_view(), _alloc(_rows_of_32(), [arith.MulIOp(count, panel_rows).result])).result
    tails = memref.CastOp(_panel_view(), _alloc(_rows_of_32(), [arith.MulIOp(count, bm).result])).result

    def prepare(g, _):
        _call(pack, [_matrix(b_group, g), _block_of(panels, g, panel_rows), j0, bn, k, half])
        _tail_of(_matrix(a_group, g), _block_of(tails, g, bm), i0, bm, k)
        return []
    for_loop(zero, count, one, [], prepare)
    _strip_calls(aset, zero_init, None, bm, [a_group, tails, panels, c_group, scratch], [i0, j0, bn, k, half],
                 [panel_rows, bm])


def _matrices(operand: ir.Value, first: ir.Value, count: ir.Value) -> ir.Value:
    """Matrices first..first+count of a batched operand (3-D view)."""
    sizes = [count] + [memref.DimOp(operand, index(d)).result for d in (1, 2)]
    return memref.subview(operand, [first, 0, 0], sizes, [1, 1, 1], result_type=ir.MemRefType(operand.type))


def _heads(operand: ir.Value, perm: tuple[int, ...], entry: ir.Value, h0: ir.Value, count: ir.Value) -> ir.Value:
    """Heads h0..h0+count of batch entry `entry` of a 4-D head view (HeadViews: dim perm[0] the batch,
    perm[1] the head) as a 3-D view [count, ., .], its other two dims in the tensor's order (the
    matrix as stored: K^T's as N x K)."""
    offsets = [0] * 4
    extents = [memref.DimOp(operand, index(d)).result for d in range(4)]
    offsets[perm[0]], extents[perm[0]] = entry, 1
    offsets[perm[1]], extents[perm[1]] = h0, count
    kept = [d for d in range(4) if d != perm[0]]
    reduced = memref.subview(operand, offsets, extents, [1] * 4, result_type=operand_type(_bf16(), 3))
    order = [kept.index(perm[1])] + [i for i, d in enumerate(kept) if d != perm[1]]
    if order == [0, 1, 2]:
        return reduced
    # the head is never the last dim (check_views): the transpose keeps the unit column stride
    return memref.TransposeOp(operand_type(_bf16(), 3), reduced, ir.AffineMap.get_permutation(order)).result


class _Tasks:
    """How a batched dispatch's matrices are split into tasks: groups of `group` consecutive matrices;
    with head views, groups of heads of one batch entry (a group of a 4-D view is then one strided 3-D
    view)."""

    def __init__(self, aset: Bf16Set, views: HeadViews, operands, batch: ir.Value, group: ir.Value):
        self.views, self.batch = views, batch
        viewed = [(v, perm) for v, perm in zip(operands, (views.a, views.b)) if perm]
        if not viewed:
            self.group = group
            self.count = arith.CeilDivUIOp(batch, group).result
            return
        value, perm = viewed[0]
        self.heads = memref.DimOp(value, index(perm[1])).result
        self.group = arith.MinUIOp(group, self.heads).result
        self.per_entry = arith.CeilDivUIOp(self.heads, self.group).result
        self.count = arith.MulIOp(arith.DivUIOp(batch, self.heads).result, self.per_entry).result

    def views_of(self, task: ir.Value, operands) -> tuple[list, ir.Value]:
        """(A's, B's, C's 3-D views of the task's matrices, how many)."""
        if not self.views.any:
            first = arith.MulIOp(task, self.group).result
            count = arith.SubIOp(arith.MinUIOp(_add(first, self.group), self.batch).result, first).result
            return [_matrices(v, first, count) for v in operands], count
        entry = arith.DivUIOp(task, self.per_entry).result
        h0 = arith.MulIOp(arith.RemUIOp(task, self.per_entry).result, self.group).result
        count = arith.SubIOp(arith.MinUIOp(_add(h0, self.group), self.heads).result, h0).result
        first = _add(arith.MulIOp(entry, self.heads).result, h0)
        perms = (self.views.a, self.views.b, None)
        return [_heads(v, perm, entry, h0, count) if perm else _matrices(v, first, count)
                for v, perm in zip(operands, perms)], count


def build_body(fn, aset: Bf16Set, zero_init: bool, prepacked: int | None = None,
               epilogue: AmxEpilogue | None = None, views: HeadViews | None = None) -> None:
    """Replace the body of bufferized placeholder `fn` (A, B, C memrefs, then the epilogue's extra
    operands; no results) with the AMX code; with `prepacked`, B is the weight's VNNI panels of that
    height and a task reads its own in place; with `views`, A or B is a 4-D head view (check_views)
    and a task takes heads of one batch entry, read in place. Where `transposes`, the code runs the
    transposed product C^T = B.A^T instead when bf16_space.transposed_pays (a small M: B, the larger
    operand, is then read in place by the tiles, and A is packed instead)."""
    views = views or HeadViews()
    check_views(aset, views)
    if aset.batched and epilogue is not None:
        raise ValueError("a batched AMX dispatch runs no epilogue")
    block = fn.regions[0].blocks[0]
    for op in reversed(list(block.operations)):       # users before what they use
        op.erase()
    a_arg, b_arg, c_arg, *extra_args = block.arguments
    rank = 3 if aset.batched else 2
    lead = rank - 2                                     # index of C's row dim
    with ir.InsertionPoint(block), fn.location:
        a = memref.CastOp(operand_type(_bf16(), 4 if views.a else rank), a_arg).result
        b = memref.CastOp(_panel_view() if prepacked else operand_type(_bf16(), 4 if views.b else rank), b_arg).result
        narrow = epilogue is not None and epilogue.narrow
        c = memref.CastOp(operand_type(_bf16() if narrow else _f32(), rank), c_arg).result
        extras = [memref.CastOp(extra_type(kind), v).result for kind, v in zip(epilogue.kinds, extra_args)] \
            if epilogue else []
        m, n = memref.DimOp(c, index(lead)).result, memref.DimOp(c, index(lead + 1)).result
        k = memref.DimOp(a, index(views.a[3] if views.a else lead + 1)).result
        half = index(prepacked) if prepacked else _mul(arith.CeilDivUIOp(k, index(K_STEP)).result, TILE_ROWS)
        if aset.batched:
            _batched_tasks(aset, zero_init, views, a, b, c, m, n, k, half)
        elif transposes(aset, prepacked, epilogue, views):
            few_rows = cmp(_EQ, transposed_pays(m, n, k, AR), index(1))
            if_else(few_rows, [], lambda: _tasks(aset, zero_init, b, a, c, n, m, k, half, transposed=True) or [],
                    lambda: _tasks(aset, zero_init, a, b, c, m, n, k, half) or [])
        else:
            _tasks(aset, zero_init, a, b, c, m, n, k, half, prepacked, epilogue, extras)
        func.ReturnOp([])


def _tasks(aset, zero_init, a, b, c, m, n, k, half, prepacked=None, epilogue=None, extras=(), transposed=False) -> None:
    """A 2-D product's blocks over the cores (an m x n product; `transposed`: C is its transpose)."""
    mc, nc = transposed_block_shape(aset, m, n, AR) if transposed else block_shape(aset, m, n, k, AR)
    loop = scf.ForallOp([0, 0], [m, n], [mc, nc], [])
    with ir.InsertionPoint(loop.body):
        i0, j0 = loop.induction_variables
        scratch, panel_rows, block = _task_block(aset, i0, j0, m, n, mc, nc, k, half)
        _block(aset, zero_init, a, b, c, scratch, prepacked, epilogue, extras, panel_rows, block, transposed)
        loop.terminator()          # the buffers are freed by the deallocation pipeline (lowering/buffers/pipelines.py)


def _batched_tasks(aset, zero_init, views, a, b, c, m, n, k, half) -> None:
    """A batched product's tasks over the cores: groups of matrices (_Tasks) times blocks."""
    batch = memref.DimOp(c, index(0)).result
    mc, nc = block_shape(aset, m, n, k, AR, batch)
    tasks = _Tasks(aset, views, (a, b), batch, _group(aset, batch, nc, half))
    loop = scf.ForallOp([0, 0, 0], [tasks.count, m, n], [1, mc, nc], [])
    with ir.InsertionPoint(loop.body):
        task, i0, j0 = loop.induction_variables
        scratch, panel_rows, block = _task_block(aset, i0, j0, m, n, mc, nc, k, half)
        groups, count = tasks.views_of(task, (a, b, c))
        _group_block(aset, zero_init, pack_name(_pack_set(aset, views)), groups, scratch, count, panel_rows, block)
        loop.terminator()


def _task_block(aset, i0, j0, m, n, mc, nc, k, half) -> tuple:
    """(the task's edge scratch, its panels' rows, its block (i0, j0, bm, bn, k, half))."""
    bm = arith.MinUIOp(arith.SubIOp(m, i0).result, mc).result
    bn = arith.MinUIOp(arith.SubIOp(n, j0).result, nc).result
    panel_rows = arith.MulIOp(arith.CeilDivUIOp(bn, index(N_TILE)).result, half).result
    return _alloc(_scratch_type(aset), []), panel_rows, (i0, j0, bm, bn, k, half)
