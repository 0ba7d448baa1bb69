"""Emit the dispatch code of a matmul-family op for a uKernel set, with the MLIR Python builders.

Three layers of private functions, each named after its parameters so ops with the same set share them:
  dispatch  computes the cache block from the runtime dims (ukernel.cover.block_shape, emitted as IR),
            runs an `scf.forall` over blocks (one task per block, spread over the cores), loops over the
            reduction in blocks of kc, packs B^T into nr-wide micro-panels [bn/nr, kc, nr] when B is
            stored N x K (the pack function: vectorized lanes x lanes transposes plus the edges) or,
            for blocks with enough rows, when stored K x N (vector row copies), and calls one
            row-strip function per row size with the row range it covers;
  rows      loops over its rows in steps of its size and over the columns in strips (body + binary
            remainders down to two vectors), then the masked tail (one or two vectors, the last masked,
            chosen by its width at run time), calling one uKernel per tile;
  uKernel   a linalg.matmul on static `rows x cols` tiles (reduction length dynamic): vectorized later;
            the masked tails are vector code from the start (emit_masked_ukernel).
Row strips live in their own functions because one-shot bufferization analysis grows exponentially
with the number of sibling loops that thread a tensor through one function body.

Each `emit_*` builds one private function at the caller's insertion point and location (passes/tile.py:
the module's end, located at the user's op under the function's name); `emit_all` names every function
a dispatch needs with the builder that makes it.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, func, linalg, scf, tensor, vector

from ..ir.attributes import DISPATCH_ATTR, MASKED_UKERNEL_ATTR, PACK_ATTR, ROWS_ATTR, SET_ATTR, UKERNEL_ATTR, UNROLL_K_ATTR, ZERO_INIT_ATTR
from ..ir.build import (cmp, dim, element_type, extract_slice, float_constant, for_loop, if_else, index,
                        insert_slice, parallel_insert_slice, private_function, read_vector, tensor_type,
                        write_vector, zero_vector)
from ..families.matmul import HeadViews
from ..ir.codecs import ukernel_set_to_attr
from ..ukernel.cover import MASKED, IntArith, block_shape, strip_bounds
from ..ukernel.space import ELEMENT_BITS, UKernelSet

_ULE, _UGE, _UGT, _EQ = (arith.CmpIPredicate.ule, arith.CmpIPredicate.uge, arith.CmpIPredicate.ugt,
                         arith.CmpIPredicate.eq)


class IRArith(IntArith):
    """ukernel.cover's index arithmetic, emitted as arith ops on unsigned index values."""

    const = staticmethod(index)
    ceil_div = staticmethod(lambda x, y: arith.CeilDivUIOp(x, y).result)
    floor_div = staticmethod(lambda x, y: arith.DivUIOp(x, y).result)
    max = staticmethod(lambda x, y: arith.MaxUIOp(x, y).result)
    min = staticmethod(lambda x, y: arith.MinUIOp(x, y).result)
    mul = staticmethod(lambda x, y: arith.MulIOp(x, y).result)
    add = staticmethod(lambda x, y: arith.AddIOp(x, y).result)
    sub = staticmethod(lambda x, y: arith.SubIOp(x, y).result)
    rem = staticmethod(lambda x, y: arith.RemUIOp(x, y).result)
    bit_and = staticmethod(lambda x, y: arith.AndIOp(x, y).result)

    @staticmethod
    def if_at_most(a, b, then, otherwise):
        return arith.SelectOp(cmp(_ULE, a, b), then, otherwise).result


AR = IRArith()


def _dyn(rank: int, dtype: str) -> ir.RankedTensorType:
    return tensor_type([None] * rank, element_type(dtype))


def _float(dtype: str) -> ir.Value:
    """0.0 of element type `dtype`."""
    return float_constant(element_type(dtype))


def _unit_attrs(*names: str) -> dict:
    return {name: ir.UnitAttr.get() for name in names}


def _call(callee: str, result: ir.Type, operands) -> ir.Value:
    return func.CallOp([result], ir.FlatSymbolRefAttr.get(callee), list(operands)).result


def _z(zero: bool) -> str:
    return "_z" if zero else ""


def ukernel_name(rows: int, cols: int, dtype: str, zero: bool = False) -> str:
    return f"ftuner_uk_matmul_{rows}x{cols}{_z(zero)}_{dtype}"


def rows_name(rows: int, uks: UKernelSet, zero: bool = False, packed: bool = False) -> str:
    packed = "_pb" if packed else ""
    return f"ftuner_rows_{rows}_n{uks.nr}{packed}{_z(zero)}_{uks.dtype}"


def transpose_name(size: int, dtype: str) -> str:
    return f"ftuner_uk_transpose_{size}x{size}_{dtype}"


def pack_name(uks: UKernelSet) -> str:
    return f"ftuner_pack_bt_{uks.lanes}_n{uks.nr}_{uks.dtype}"


def copy_pack_name(uks: UKernelSet) -> str:
    return f"ftuner_pack_b_n{uks.nr}_{uks.dtype}"


def dispatch_name(uks: UKernelSet, zero: bool = False, prepacked: bool = False,
                  views: HeadViews | None = None) -> str:
    return (f"ftuner_dispatch_{uks.family}_{uks.mr}x{uks.nr}_mc{uks.mc}_nc{uks.nc}_kc{uks.kc}"
            f"_p{uks.cores}{'_pw' if prepacked else ''}{views.tag if views else ''}{_z(zero)}_{uks.dtype}")


def emit_ukernel(rows: int, cols: int, dtype: str, zero: bool = False, unroll: bool = False):
    """C += A.B on a static tile; with `zero`, C = A.B (the accumulators start at zero: C is not read).
    With `unroll` (the full-width tiles), the vectorizer unrolls its reduction loop (lowering/loops/ukernel_vectors.py)."""
    el = element_type(dtype)
    a, b, c = tensor_type([rows, None], el), tensor_type([None, cols], el), tensor_type([rows, cols], el)

    def body(a, b, c):
        init = linalg.fill(_float(dtype), outs=[c]) if zero else c
        return [linalg.matmul(a, b, outs=[init])]
    attributes = _unit_attrs(UKERNEL_ATTR, *([UNROLL_K_ATTR] if unroll else []))
    return private_function(ukernel_name(rows, cols, dtype, zero), [a, b, c], [c], attributes, body)


def masked_ukernel_name(rows: int, width: int, dtype: str, zero: bool = False) -> str:
    return f"ftuner_uk_matmul_{rows}xm{width}{_z(zero)}_{dtype}"


def emit_masked_ukernel(rows: int, width: int, dtype: str, zero: bool = False, chains: int = 1,
                        lanes: int | None = None):
    """C += A.B (C = A.B with `zero`) on a `rows x w` tile, w <= width columns known at run time, as
    vector code: `width / lanes` vectors per row (one when `lanes` is not given), the last under the mask
    of its live lanes (masked loads and stores: lanes past w are never touched). Each reduction step
    reads the B row's vectors and broadcasts each A element once for all of them; the accumulators are
    carried in registers. A tile of fewer accumulators than `chains` (the FMAs the core needs in flight:
    ports x latency) splits the reduction over that many sets of accumulators, summed at the end, so its
    FMAs do not wait on each other."""
    lanes = lanes or width
    vectors = width // lanes
    el = element_type(dtype)
    ta, tb, tc = tensor_type([rows, None], el), tensor_type([None, None], el), tensor_type([rows, None], el)
    vec, lane = ir.VectorType.get([lanes], el), ir.VectorType.get([1], el)
    count = rows * vectors                       # accumulators of one set
    sets = -(-chains // count)
    tiles = [(r, v) for r in range(rows) for v in range(vectors)]

    def body(a, b, c):
        zero_i, one = index(0), index(1)
        pad = _float(dtype)
        k, w = dim(a, one), dim(c, one)
        offsets = [zero_i] + [index(v * lanes) for v in range(1, vectors)]
        live = arith.SubIOp(w, offsets[-1]).result if vectors > 1 else w
        mask = vector.CreateMaskOp(ir.VectorType.get([lanes], ir.IntegerType.get_signless(1)), [live]).result
        masks = [None] * (vectors - 1) + [mask]  # the last vector is the masked one
        row_index = [index(i) for i in range(rows)]
        zeros = zero_vector(vec)
        init = [zeros] * count if zero else [read_vector(vec, c, [row_index[r], offsets[v]], pad, masks[v]) for r, v in tiles]

        def steps(kk, accs):
            """One reduction step k = kk on the accumulators of every row."""
            brow = [read_vector(vec, b, [kk, offsets[v]], pad, masks[v]) for v in range(vectors)]
            out = []
            for r in range(rows):
                # a one-lane read, not tensor.extract: extracts get their indices clamped (safe_indexing.py)
                spread = vector.BroadcastOp(vec, read_vector(lane, a, [row_index[r], kk], pad)).result
                out += [vector.FMAOp(spread, brow[v], accs[r * vectors + v]).result for v in range(vectors)]
            return out

        def loop(start, stop, step: int, carried, each):
            return for_loop(start, stop, index(step) if step > 1 else one, carried, each)

        if sets == 1:
            accs = loop(zero_i, k, 1, init, steps)
        else:
            whole = arith.MulIOp(arith.DivUIOp(k, index(sets)).result, index(sets)).result

            def unrolled(kk, carried):
                out = []
                for i in range(sets):
                    at = kk if i == 0 else arith.AddIOp(kk, index(i)).result
                    out += steps(at, carried[i * count:(i + 1) * count])
                return out
            split = loop(zero_i, whole, sets, init + [zeros] * (count * (sets - 1)), unrolled)
            accs = loop(whole, k, 1, split[:count], steps)
            for i in range(1, sets):
                accs = [arith.AddFOp(x, y).result for x, y in zip(accs, split[i * count:(i + 1) * count])]
        out = c
        for x, (r, v) in zip(accs, tiles):
            out = write_vector(x, out, [row_index[r], offsets[v]], masks[v])
        return [out]
    return private_function(masked_ukernel_name(rows, width, dtype, zero), [ta, tb, tc], [tc],
                            _unit_attrs(MASKED_UKERNEL_ATTR), body)


def emit_transpose_ukernel(size: int, dtype: str):
    t = tensor_type([size, size], element_type(dtype))
    return private_function(transpose_name(size, dtype), [t, t], [t], _unit_attrs(UKERNEL_ATTR),
                            lambda src, dst: [linalg.transpose(src, outs=[dst], permutation=[1, 0]).result])


# A plain matmul packs its B block for blocks of at least PACK_MIN_ROWS rows (the pack writes and rereads
# the block, which a few row strips do not repay: GPT-2's layer at 80 rows, N = 768, gains nothing), and
# from PACK_MIN_ROW_STRIPS strips of rows on when B's rows are FAR_ROW_BYTES or more apart: an in-place
# panel then touches a new page every row or two (the TLB and the prefetchers lose it). Measured same
# process, 2 threads, packed/in place: [80 x 768] x [768 x 2304] 1.20x, [96 x 768] x [768 x 3072] 1.42x,
# [64 x 576] x [576 x 3136] (a ResNet layer1 conv per image) 1.06-1.24x, [128 x 256] x [256 x 3136] 1.27x,
# [151 x 1607] x [1607 x 829] 1.08-1.46x; N = 768..1000 0.94-1.06x, N = 500 0.9x, below 8 strips 0.5-0.9x.
PACK_MIN_ROWS = 256
PACK_MIN_ROW_STRIPS = 8
FAR_ROW_BYTES = 3 << 10


def packs_b(uks: UKernelSet) -> bool:
    """B can go through micro-panels: always when stored N x K (it must be transposed anyway), and
    for a plain matmul with enough rows (PACK_MIN_ROWS, chosen at run time), whose B rows are N floats
    apart (an in-place panel falls into a few L1 sets). A batched matmul's B (attention's K^T or V, a
    few KiB a batch) is read in place."""
    return uks.transpose_b or not uks.batched


def _panels(uks: UKernelSet) -> ir.RankedTensorType:
    """The packed B block: [panels, kk, nr], panel p holding columns [p*nr, (p+1)*nr) row after row."""
    return tensor_type([None, None, uks.nr], element_type(uks.dtype))


def _if_some(count: ir.Value, cur: ir.Value, fill) -> ir.Value:
    """`fill(cur)` when count > 0, else cur unchanged."""
    return if_else(cmp(_UGT, count, index(0)), [cur.type], lambda: [fill(cur)], lambda: [cur])[0]


def emit_pack(uks: UKernelSet):
    """B^T block [bn x kk] -> nr-wide micro-panels [ceil(bn/nr), kk, nr], so each uKernel streams its
    B panel contiguously (nr floats a row) instead of rows bn apart that fall into a few L1 sets. Full
    `lanes x lanes` tiles go through the vectorized transpose uKernel (in-register shuffles); the edges
    (kk % lanes rows, and the last panel's bn % nr columns) through plain transposes. Columns past bn in
    the last panel are never written nor read."""
    t2, panels, size = _dyn(2, uks.dtype), _panels(uks), uks.lanes
    tile = tensor_type([size, size], element_type(uks.dtype))

    def body(src, dst):
        zero, one, step, width = index(0), index(1), index(size), index(uks.nr)
        bn, kk = dim(src, zero), dim(src, one)
        bn_full = arith.SubIOp(bn, arith.RemUIOp(bn, width).result).result
        kk_full = arith.SubIOp(kk, arith.RemUIOp(kk, step).result).result
        full_panels = arith.DivUIOp(bn_full, width).result

        def tile_columns(j, d):
            panel, col = arith.DivUIOp(j, width).result, arith.RemUIOp(j, width).result

            def tile_rows(k, e):
                where = ([panel, k, col], [1, size, size])
                tr = _call(transpose_name(size, uks.dtype), tile,
                           [extract_slice(src, [j, k], [size, size], tile), extract_slice(e[0], *where, tile)])
                return [insert_slice(tr, e[0], *where)]
            return for_loop(zero, kk_full, step, d, tile_rows)
        tiles = for_loop(zero, bn_full, step, [dst], tile_columns)[0]

        def transpose_into(cur, src_where, dst_where):
            """src[src_where] (2-D) transposed into the panel slice cur[dst_where] (rank-reduced to 2-D)."""
            moved = linalg.transpose(extract_slice(src, *src_where, t2), outs=[extract_slice(cur, *dst_where, t2)],
                                     permutation=[1, 0]).result
            return insert_slice(moved, cur, *dst_where)

        # the last kk % lanes rows of every full panel, when there are any: with kk known (a head view
        # of D = 32 columns, inlined) an empty slice at offset kk would not verify
        rest_k = arith.SubIOp(kk, kk_full).result

        def bottom_rows(p, f):
            first = arith.MulIOp(p, width).result
            return [transpose_into(f[0], ([first, kk_full], [width, rest_k]), ([p, kk_full, 0], [1, rest_k, width]))]
        bottom = _if_some(rest_k, tiles, lambda cur: for_loop(zero, full_panels, one, [cur], bottom_rows)[0])
        # the last panel's bn % nr columns, every row (when there are any: the panel exists only then)
        rest_n = arith.SubIOp(bn, bn_full).result
        return [_if_some(rest_n, bottom, lambda cur: transpose_into(
            cur, ([bn_full, 0], [rest_n, kk]), ([full_panels, 0, 0], [1, kk, rest_n])))]
    return private_function(pack_name(uks), [t2, panels], [panels], _unit_attrs(PACK_ATTR), body)


def emit_copy_pack(uks: UKernelSet):
    """B block [kk x bn] (stored K x N) -> nr-wide micro-panels [ceil(bn/nr), kk, nr], written as vector
    code: each panel row one nr-wide vector read and written, the last panel's bn % nr columns under a
    mask (lanes past bn are never read nor written). As linalg.copy loops LLVM left it scalar: a third
    of a conv layer's GEMM time went to this copy."""
    t2, panels, nr = _dyn(2, uks.dtype), _panels(uks), uks.nr
    vec = ir.VectorType.get([nr], element_type(uks.dtype))

    def body(src, dst):
        zero, one, width = index(0), index(1), index(nr)
        pad = _float(uks.dtype)
        kk, bn = dim(src, zero), dim(src, one)
        full_panels = arith.DivUIOp(bn, width).result
        bn_full = arith.MulIOp(full_panels, width).result

        def rows_into(cur, panel, col, mask):
            """Every row of panel `panel` from the block's columns starting at `col` (under `mask`)."""
            return for_loop(zero, kk, one, [cur], lambda k, into: [
                write_vector(read_vector(vec, src, [k, col], pad, mask), into[0], [panel, k, zero], mask)])[0]

        full = for_loop(zero, full_panels, one, [dst],
                        lambda p, d: [rows_into(d[0], p, arith.MulIOp(p, width).result, None)])[0]
        rest_n = arith.SubIOp(bn, bn_full).result
        mask = vector.CreateMaskOp(ir.VectorType.get([nr], ir.IntegerType.get_signless(1)), [rest_n]).result
        return [_if_some(rest_n, full, lambda cur: rows_into(cur, full_panels, bn_full, mask))]
    return private_function(copy_pack_name(uks), [t2, panels], [panels], _unit_attrs(PACK_ATTR), body)


def emit_rows(rows: int, uks: UKernelSet, zero: bool = False, packed: bool = False):
    """Rows [lo, hi) of a block, `rows` at a time, every column strip; hi - lo is a multiple of rows.
    With `zero`, the uKernels overwrite C instead of accumulating into it. B is the block itself
    (kk x bn, read in place) or, with `packed`, its micro-panels (emit_pack, emit_copy_pack)."""
    el = element_type(uks.dtype)
    t = _dyn(2, uks.dtype)
    tb = _panels(uks) if packed else t

    def body(a, b, c, lo_rows, hi_rows):
        one = index(1)
        kk, bn = dim(a, one), dim(c, one)
        col_ranges = strip_bounds(bn, uks.col_sizes, uks.tail_width, AR)
        width = index(uks.nr) if packed else None      # panel p of column j: j / nr, at j % nr

        def row_strip(i, carried):
            acc = carried[0]
            for cols, lo, hi in col_ranges:
                # the masked tail's loop runs once when there is a tail (hi - lo < its step), its width hi - j
                step = index(uks.tail_width if cols == MASKED else cols)
                acc = for_loop(lo, hi, step, [acc], lambda j, cur: [tile(i, j, cur[0], cols, hi)])[0]
            return [acc]

        def tile(i, j, cur, cols, hi):
            size = arith.SubIOp(hi, j).result if cols == MASKED else cols
            static = None if cols == MASKED else cols
            tile_a, tile_b, tile_c = (tensor_type([rows, None], el), tensor_type([None, static], el),
                                      tensor_type([rows, static], el))
            sa = extract_slice(a, [i, 0], [rows, kk], tile_a)
            if packed:
                panel, col = arith.DivUIOp(j, width).result, arith.RemUIOp(j, width).result
                sb = extract_slice(b, [panel, 0, col], [1, kk, size], tile_b)
            else:
                sb = extract_slice(b, [0, j], [kk, size], tile_b)
            sc = extract_slice(cur, [i, j], [rows, size], tile_c)

            def call(callee: str) -> ir.Value:
                return _call(callee, tile_c, [sa, sb, sc])

            def masked(widths: tuple[int, ...]) -> ir.Value:
                """The narrowest masked kernel that holds the tail."""
                if len(widths) == 1:
                    return call(masked_ukernel_name(rows, widths[0], uks.dtype, zero))
                fits = cmp(_ULE, size, index(widths[0]))
                return if_else(fits, [tile_c], lambda: [masked(widths[:1])], lambda: [masked(widths[1:])])[0]
            out = masked(uks.masked_widths) if cols == MASKED else call(ukernel_name(rows, cols, uks.dtype, zero))
            return insert_slice(out, cur, [i, j], [rows, size])
        return for_loop(lo_rows, hi_rows, index(rows), [c], row_strip)
    index_type = ir.IndexType.get()
    attributes = {ROWS_ATTR: ir.IntegerAttr.get(ir.IntegerType.get_signless(64), rows)}
    return private_function(rows_name(rows, uks, zero, packed), [t, tb, t, index_type, index_type], [t],
                            attributes, body)


def emit_dispatch(uks: UKernelSet, zero_init: bool = False, prepacked: bool = False,
                  views: HeadViews | None = None):
    """The dispatch function: (A, B, C_init) -> C_init + A.B, all operands fully dynamic. With
    `zero_init`: (A, B, C) -> A.B, C only giving the result's storage (the op's init was a zero fill).
    With `prepacked` (a matmul_transpose_b set): B is already the micro-panels of the whole N x K
    operand, [ceil(N/nr), K, nr] (a constant weight packed at compile time, codegen/weight_panels.py);
    a block reads its panels in place. With `views` (a batch_matmul set): some of A, B and C are 4-D
    tensors whose (batch, head) slices are the batch's matrices (HeadViews); a C view needs `zero_init`
    (its tensor is only storage)."""
    views = views or HeadViews()
    if views.any and not (uks.batched and not uks.transpose_b and not prepacked):
        raise ValueError(f"head views apply to a batch_matmul dispatch, not {uks.family}")
    if views.c and not zero_init:
        raise ValueError("a head view of C needs a dispatch that overwrites C (zero_init)")
    rank = 3 if uks.batched else 2
    t, t2, t4 = _dyn(rank, uks.dtype), _dyn(2, uks.dtype), _dyn(4, uks.dtype)
    ta, tc = (t4 if views.a else t), (t4 if views.c else t)
    tb, panels_type = (_panels(uks) if prepacked else t4 if views.b else t), _panels(uks)
    lead = 1 if uks.batched else 0          # index of the M axis in C

    def body(A, B, C):
        zero, one = index(0), index(1)
        if views.c:
            m, n = dim(C, index(views.c[2])), dim(C, index(views.c[3]))
            batch = arith.MulIOp(dim(C, index(views.c[0])), dim(C, index(views.c[1]))).result
        else:
            m, n = dim(C, index(lead)), dim(C, index(lead + 1))
            batch = dim(C, zero) if uks.batched else one
        k = dim(A, index(views.a[3] if views.a else lead + 1))
        mc, nc = block_shape(uks, batch, m, n, AR)     # the cache block, as ukernel.cover computes it
        if uks.batched:
            loop = scf.ForallOp([0, 0, 0], [batch, m, n], [1, mc, nc], [C])
        else:
            loop = scf.ForallOp([0, 0], [m, n], [mc, nc], [C])
        with ir.InsertionPoint(loop.body):
            *outer, i0, j0 = loop.induction_variables
            heads = _batch_and_head(outer, (A, views.a), (B, views.b), (C, views.c))

            def lead_at(*offsets) -> list:
                """Offsets into a (batched) operand: the batch index first."""
                return [*outer, *offsets]

            def lead_size(*sizes) -> list:
                return [1] * len(outer) + list(sizes)

            def where(perm, rows, cols) -> tuple[list, list]:
                """Offsets and sizes of the 2-D block at rows and cols, each (offset, size), in an operand
                passed as is or as a head view (perm; the block is then in the 4-D tensor's dim order:
                columns first for K^T)."""
                if perm is None:
                    return lead_at(rows[0], cols[0]), lead_size(rows[1], cols[1])
                offsets, sizes = [0] * 4, [1] * 4
                for at, (offset, size) in zip(perm, ((heads[0], 1), (heads[1], 1), rows, cols)):
                    offsets[at], sizes[at] = offset, size
                return offsets, sizes

            def block(operand, perm, rows, cols):
                return extract_slice(operand, *where(perm, rows, cols), t2)
            bm = arith.MinUIOp(arith.SubIOp(m, i0).result, mc).result
            bn = arith.MinUIOp(arith.SubIOp(n, j0).result, nc).result
            cblk = block(loop.inner_iter_args[0], views.c, (i0, bm), (j0, bn))
            row_ranges = strip_bounds(bm, uks.row_sizes, ar=AR)
            kc = index(uks.kc)
            chooses_pack = packs_b(uks) and not uks.transpose_b and not prepacked    # per block, at run time
            if chooses_pack:
                many_rows = cmp(_UGE, bm, index(PACK_MIN_ROWS))
                some_rows = cmp(_UGE, bm, index(PACK_MIN_ROW_STRIPS * uks.mr))
                far_rows = cmp(_UGE, n, index(FAR_ROW_BYTES // (ELEMENT_BITS[uks.dtype] // 8)))
                pack_b = arith.OrIOp(many_rows, arith.AndIOp(some_rows, far_rows).result).result

            def k_block(k0, c_in, overwrite: bool):
                """The block's rows over reduction indices [k0, k0 + kk): C_in + A.B, or A.B with `overwrite`."""
                kk = arith.MinUIOp(arith.SubIOp(k, k0).result, kc).result
                ablk = block(A, views.a, (i0, bm), (k0, kk))
                if prepacked:
                    first = arith.DivUIOp(j0, index(uks.nr)).result     # nc is a multiple of nr
                    count = arith.CeilDivUIOp(bn, index(uks.nr)).result
                    return row_strips(ablk, extract_slice(B, [first, k0, 0], [count, kk, uks.nr], tb),
                                      c_in, overwrite, packed=True)
                if uks.transpose_b:
                    bt = extract_slice(B, lead_at(j0, k0), lead_size(bn, kk), t2)
                    return row_strips(ablk, pack(pack_name(uks), bt, kk), c_in, overwrite, packed=True)
                bblk = block(B, views.b, (k0, kk), (j0, bn))
                if views.b:        # rows H * D apart: a panel per block reads them once
                    packer = pack_name(uks) if views.b_transposed else copy_pack_name(uks)
                    return row_strips(ablk, pack(packer, bblk, kk), c_in, overwrite, packed=True)
                if not chooses_pack:
                    return row_strips(ablk, bblk, c_in, overwrite, packed=False)
                return if_else(pack_b, [t2],
                               lambda: [row_strips(ablk, pack(copy_pack_name(uks), bblk, kk), c_in, overwrite, True)],
                               lambda: [row_strips(ablk, bblk, c_in, overwrite, packed=False)])[0]

            def pack(function: str, block, kk):
                """`block` packed by `function` into a fresh panel buffer of ceil(bn / nr) panels."""
                count = arith.CeilDivUIOp(bn, index(uks.nr)).result
                empty = tensor.EmptyOp([count, kk, uks.nr], element_type(uks.dtype)).result
                return _call(function, panels_type, [block, empty])

            def row_strips(ablk, bblk, cur, overwrite: bool, packed: bool):
                for rows, lo, hi in row_ranges:
                    cur = _call(rows_name(rows, uks, overwrite, packed), t2, [ablk, bblk, cur, lo, hi])
                return cur

            start, init = zero, cblk
            if zero_init:
                # the first reduction block writes C (it is never read: the op's init was zeros); K = 0 leaves zeros
                empty_k = cmp(_EQ, k, zero)
                start = kc
                init = if_else(empty_k, [t2], lambda: [linalg.fill(_float(uks.dtype), outs=[cblk])],
                               lambda: [k_block(zero, cblk, overwrite=True)])[0]
            acc = for_loop(start, k, kc, [init], lambda k0, cc: [k_block(k0, cc[0], overwrite=False)])[0]
            with ir.InsertionPoint(loop.terminator().block):
                parallel_insert_slice(acc, loop.inner_iter_args[0], *where(views.c, (i0, bm), (j0, bn)))
        return [loop.results[0]]
    attributes = {DISPATCH_ATTR: ir.StringAttr.get(uks.family), SET_ATTR: ukernel_set_to_attr(uks)}
    if zero_init:
        attributes[ZERO_INIT_ATTR] = ir.UnitAttr.get()
    return private_function(dispatch_name(uks, zero_init, prepacked, views), [ta, tb, tc], [tc], attributes, body)


def _batch_and_head(outer, *operands) -> tuple | None:
    """(batch, head) of batch index outer[0] = batch * H + head, H the head dim of the first operand
    given as a head view ((tensor, perm) pairs); None when no operand is one."""
    for operand, perm in operands:
        if perm is not None:
            heads = dim(operand, index(perm[1]))
            return arith.DivUIOp(outer[0], heads).result, arith.RemUIOp(outer[0], heads).result
    return None


def _row_layouts(uks: UKernelSet, prepacked: bool, views: HeadViews | None) -> tuple[bool, ...]:
    """The B layouts the row strips read: micro-panels (packed), the block in place, or both."""
    if uks.transpose_b or prepacked or (views and views.b):
        return (True,)
    return (True, False) if packs_b(uks) else (False,)


def emit_all(uks: UKernelSet, zero_init: bool = False, prepacked: bool = False,
             views: HeadViews | None = None) -> dict:
    """symbol name -> the builder of that function (no arguments), for the dispatch and everything it
    calls, in the order they are to be added."""
    funcs = {dispatch_name(uks, zero_init, prepacked, views): lambda: emit_dispatch(uks, zero_init, prepacked, views)}
    dt = uks.dtype
    for zero in ((False, True) if zero_init else (False,)):
        for rows in uks.row_sizes:
            for packed in _row_layouts(uks, prepacked, views):
                funcs[rows_name(rows, uks, zero, packed)] = lambda r=rows, z=zero, p=packed: emit_rows(r, uks, z, p)
        for rows, cols in uks.ukernels():
            funcs[ukernel_name(rows, cols, dt, zero)] = (
                lambda r=rows, c=cols, z=zero: emit_ukernel(r, c, dt, z, unroll=c == uks.nr))
        if uks.tail_width > 1:          # else every column strip is a whole vector (strip_bounds)
            for rows in uks.row_sizes:
                for width in uks.masked_widths:
                    funcs[masked_ukernel_name(rows, width, dt, zero)] = (
                        lambda r=rows, w=width, z=zero: emit_masked_ukernel(r, w, dt, z, uks.chains, uks.lanes))
    if prepacked:
        return funcs
    transposes_b = uks.transpose_b or (views is not None and views.b_transposed)
    if (packs_b(uks) or (views and views.b)) and not transposes_b:
        funcs[copy_pack_name(uks)] = lambda: emit_copy_pack(uks)
    if transposes_b:
        funcs[pack_name(uks)] = lambda: emit_pack(uks)
        funcs[transpose_name(uks.lanes, dt)] = lambda: emit_transpose_ukernel(uks.lanes, dt)
    return funcs
