"""Emit the dispatch code of a matmul-family op for a uKernel set, as MLIR text.

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
"""
from __future__ import annotations

from ..ukernel.cover import MASKED, IntArith, block_shape, strip_bounds
from ..ukernel.space import ELEMENT_BITS, UKernelSet
from .text import IRBody


class IRArith(IntArith):
    """ukernel.cover's index arithmetic, emitted as arith ops on unsigned index values."""

    def __init__(self, body: IRBody):
        self.b = body

    def const(self, value: int) -> str:
        return self.b.const(value)

    def _binary(self, op: str, x: str, y: str) -> str:
        return self.b.op("v", f"arith.{op} {x}, {y} : index")

    def ceil_div(self, x, y):
        return self._binary("ceildivui", x, y)

    def floor_div(self, x, y):
        return self._binary("divui", x, y)

    def max(self, x, y):
        return self._binary("maxui", x, y)

    def min(self, x, y):
        return self._binary("minui", x, y)

    def mul(self, x, y):
        return self._binary("muli", x, y)

    def add(self, x, y):
        return self._binary("addi", x, y)

    def sub(self, x, y):
        return self._binary("subi", x, y)

    def rem(self, x, y):
        return self._binary("remui", x, y)

    def bit_and(self, x, y):
        return self._binary("andi", x, y)

    def if_at_most(self, a, b, then, otherwise):
        at_most = self.b.op("le", f"arith.cmpi ule, {a}, {b} : index")
        return self.b.op("sel", f"arith.select {at_most}, {then}, {otherwise} : index")


def _dyn(rank: int, dtype: str) -> str:
    return f"tensor<{'?x' * rank}{dtype}>"


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


def dispatch_name(uks: UKernelSet, zero: bool = False, prepacked: bool = False) -> str:
    return (f"ftuner_dispatch_{uks.family}_{uks.mr}x{uks.nr}_mc{uks.mc}_nc{uks.nc}_kc{uks.kc}"
            f"_p{uks.cores}{'_pw' if prepacked else ''}{_z(zero)}_{uks.dtype}")


def emit_ukernel(rows: int, cols: int, dtype: str, zero: bool = False, unroll: bool = False) -> str:
    """C += A.B on a static tile; with `zero`, C = A.B (the accumulators start at zero: C is not read).
    With `unroll` (the full-width tiles), the vectorizer unrolls its reduction loop (lowering/cpu.py)."""
    a, b, c = f"tensor<{rows}x?x{dtype}>", f"tensor<?x{cols}x{dtype}>", f"tensor<{rows}x{cols}x{dtype}>"
    init = "%c"
    lines = []
    if zero:
        lines = [f"  %zero = arith.constant 0.0 : {dtype}",
                 f"  %z = linalg.fill ins(%zero : {dtype}) outs(%c : {c}) -> {c}"]
        init = "%z"
    attributes = "ftuner.ukernel, ftuner.unroll_k" if unroll else "ftuner.ukernel"
    return (f"func.func private @{ukernel_name(rows, cols, dtype, zero)}(%a: {a}, %b: {b}, %c: {c}) -> {c}"
            f" attributes {{{attributes}}} {{\n" + "".join(line + "\n" for line in lines) +
            f"  %r = linalg.matmul ins(%a, %b : {a}, {b}) outs({init} : {c}) -> {c}\n"
            f"  return %r : {c}\n}}")


def masked_ukernel_name(rows: int, width: int, dtype: str, zero: bool = False) -> str:
    return f"ftuner_uk_matmul_{rows}xm{width}{_z(zero)}_{dtype}"


def emit_masked_ukernel(rows: int, width: int, dtype: str, zero: bool = False, chains: int = 1,
                        lanes: int | None = None) -> str:
    """C += A.B (C = A.B with `zero`) on a `rows x w` tile, w <= width columns known at run time, as
    vector code: `width / lanes` vectors per row (one when `lanes` is not given), the last under the mask
    of its live lanes (masked loads and stores: lanes past w are never touched). Each reduction step
    reads the B row's vectors and broadcasts each A element once for all of them; the accumulators are
    carried in registers. A tile of fewer accumulators than `chains` (the FMAs the core needs in flight:
    ports x latency) splits the reduction over that many sets of accumulators, summed at the end, so its
    FMAs do not wait on each other."""
    lanes = lanes or width
    vectors = width // lanes
    a, b, c = f"tensor<{rows}x?x{dtype}>", f"tensor<?x?x{dtype}>", f"tensor<{rows}x?x{dtype}>"
    vec = f"vector<{lanes}x{dtype}>"
    count = rows * vectors                       # accumulators of one set
    sets = -(-chains // count)
    body = IRBody()
    zero_i, one = body.const(0), body.const(1)
    pad = body.op("pad", f"arith.constant 0.0 : {dtype}")
    k = body.op("k", f"tensor.dim %a, {one} : {a}")
    w = body.op("w", f"tensor.dim %c, {one} : {c}")
    offsets = [zero_i] + [body.const(v * lanes) for v in range(1, vectors)]
    live = body.op("live", f"arith.subi {w}, {offsets[-1]} : index") if vectors > 1 else w
    mask = body.op("mask", f"vector.create_mask {live} : vector<{lanes}xi1>")
    masks = [""] * (vectors - 1) + [f", {mask}"]  # the last vector is the masked one
    row_index = [body.const(i) for i in range(rows)]
    zeros = body.op("zero", f"arith.constant dense<0.0> : {vec}")
    tiles = [(r, v) for r in range(rows) for v in range(vectors)]
    if zero:
        init = [zeros] * count
    else:
        init = [body.op("c", f"vector.transfer_read %c[{row_index[r]}, {offsets[v]}], {pad}{masks[v]} "
                             f"{{in_bounds = [true]}} : {c}, {vec}") for r, v in tiles]

    def steps(kk: str, accs: list[str]) -> list[str]:
        """One reduction step k = kk on the accumulators of every row."""
        brow = [body.op("b", f"vector.transfer_read %b[{kk}, {offsets[v]}], {pad}{masks[v]} {{in_bounds = [true]}} "
                             f": {b}, {vec}") for v in range(vectors)]
        out = []
        for r in range(rows):
            # a one-lane read, not tensor.extract: extracts get their indices clamped (safe_indexing.py)
            element = body.op("a", f"vector.transfer_read %a[{row_index[r]}, {kk}], {pad} {{in_bounds = [true]}} "
                                   f": {a}, vector<1x{dtype}>")
            spread = body.op("s", f"vector.broadcast {element} : vector<1x{dtype}> to {vec}")
            out += [body.op("y", f"vector.fma {spread}, {brow[v]}, {accs[r * vectors + v]} : {vec}")
                    for v in range(vectors)]
        return out

    def loop(start: str, stop: str, step: int, init: list[str], each) -> list[str]:
        """scf.for over [start, stop) by `step` carrying `init`; `each(kk, carried)` gives the yields."""
        result = body.fresh("acc")
        carried = [body.fresh("x") for _ in init]
        types = ", ".join([vec] * len(init))
        iter_args = ", ".join(f"{x} = {v}" for x, v in zip(carried, init))
        kk = body.fresh("kk")
        body(f"{result}:{len(init)} = scf.for {kk} = {start} to {stop} step {body.const(step) if step > 1 else one} "
             f"iter_args({iter_args}) -> ({types}) {{")
        body(f"scf.yield {', '.join(each(kk, carried))} : {types}")
        body("}")
        return [f"{result}#{i}" for i in range(len(init))]

    if sets == 1:
        accs = loop(zero_i, k, 1, init, steps)
    else:
        whole = body.op("kw", f"arith.muli {body.op('kq', f'arith.divui {k}, {body.const(sets)} : index')}, "
                              f"{body.const(sets)} : index")

        def unrolled(kk, carried):
            out = []
            for i in range(sets):
                at = kk if i == 0 else body.op("kk", f"arith.addi {kk}, {body.const(i)} : index")
                out += steps(at, carried[i * count:(i + 1) * count])
            return out
        split = loop(zero_i, whole, sets, init + [zeros] * (count * (sets - 1)), unrolled)
        accs = loop(whole, k, 1, split[:count], steps)
        for i in range(1, sets):
            accs = [body.op("sum", f"arith.addf {x}, {y} : {vec}") for x, y in zip(accs, split[i * count:(i + 1) * count])]
    out = "%c"
    for x, (r, v) in zip(accs, tiles):
        out = body.op("o", f"vector.transfer_write {x}, {out}[{row_index[r]}, {offsets[v]}]{masks[v]} "
                           f"{{in_bounds = [true]}} : {vec}, {c}")
    body(f"return {out} : {c}")
    return (f"func.func private @{masked_ukernel_name(rows, width, dtype, zero)}(%a: {a}, %b: {b}, %c: {c}) -> {c}"
            f" attributes {{ftuner.masked_ukernel}} {{\n{body.text()}\n}}")


def emit_transpose_ukernel(size: int, dtype: str) -> str:
    t = f"tensor<{size}x{size}x{dtype}>"
    return (f"func.func private @{transpose_name(size, dtype)}(%src: {t}, %dst: {t}) -> {t} attributes {{ftuner.ukernel}} {{\n"
            f"  %r = linalg.transpose ins(%src : {t}) outs(%dst : {t}) permutation = [1, 0]\n"
            f"  return %r : {t}\n}}")


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


def _panels(uks: UKernelSet) -> str:
    """The packed B block: [panels, kk, nr], panel p holding columns [p*nr, (p+1)*nr) row after row."""
    return f"tensor<?x?x{uks.nr}x{uks.dtype}>"


def _into_panels(b: IRBody, cur: str, src_where: str, dst_where: str, t2: str, panels: str, move) -> str:
    """src[src_where] (2-D) moved into the panel slice cur[dst_where] (rank-reduced to 2-D); `move`
    gives the op text from the source and destination slices (a copy or a transpose)."""
    src = b.op("s", f"tensor.extract_slice %src{src_where} : {t2} to {t2}")
    dst = b.op("o", f"tensor.extract_slice {cur}{dst_where} : {panels} to {t2}")
    moved = b.op("m", move(src, dst))
    return b.op("w", f"tensor.insert_slice {moved} into {cur}{dst_where} : {t2} into {panels}")


def _last_panel(b: IRBody, cur: str, rest_n: str, fill, panels: str) -> str:
    """`fill(cur)` when the block has a partial last panel (rest_n > 0 columns), else cur unchanged."""
    partial = b.op("part", f"arith.cmpi ugt, {rest_n}, {b.const(0)} : index")
    return b.if_else("packed", partial, panels, lambda: fill(cur), lambda: cur)


def emit_pack(uks: UKernelSet) -> str:
    """B^T block [bn x kk] -> nr-wide micro-panels [ceil(bn/nr), kk, nr], so each uKernel streams its
    B panel contiguously (nr floats a row) instead of rows bn apart that fall into a few L1 sets. Full
    `lanes x lanes` tiles go through the vectorized transpose uKernel (in-register shuffles); the edges
    (kk % lanes rows, and the last panel's bn % nr columns) through plain transposes. Columns past bn in
    the last panel are never written nor read."""
    t2, panels, dt, size, nr = _dyn(2, uks.dtype), _panels(uks), uks.dtype, uks.lanes, uks.nr
    tile = f"tensor<{size}x{size}x{dt}>"
    b = IRBody()
    zero, one, step, width = b.const(0), b.const(1), b.const(size), b.const(nr)
    bn = b.op("bn", f"tensor.dim %src, {zero} : {t2}")
    kk = b.op("kk", f"tensor.dim %src, {one} : {t2}")
    bn_full = b.op("bnf", f"arith.subi {bn}, {b.op('r', f'arith.remui {bn}, {width} : index')} : index")
    kk_full = b.op("kkf", f"arith.subi {kk}, {b.op('r', f'arith.remui {kk}, {step} : index')} : index")
    full_panels = b.op("np", f"arith.divui {bn_full}, {width} : index")
    b(f"%tiles = scf.for %j = {zero} to {bn_full} step {step} iter_args(%d = %dst) -> ({panels}) {{")
    panel = b.op("p", f"arith.divui %j, {width} : index")
    col = b.op("q", f"arith.remui %j, {width} : index")
    b(f"%col = scf.for %k = {zero} to {kk_full} step {step} iter_args(%e = %d) -> ({panels}) {{")
    where = f"[{panel}, %k, {col}] [1, {size}, {size}] [1, 1, 1]"
    src = b.op("s", f"tensor.extract_slice %src[%j, %k] [{size}, {size}] [1, 1] : {t2} to {tile}")
    dst = b.op("o", f"tensor.extract_slice %e{where} : {panels} to {tile}")
    tr = b.op("tr", f"func.call @{transpose_name(size, dt)}({src}, {dst}) : ({tile}, {tile}) -> {tile}")
    b(f"scf.yield {b.op('w', f'tensor.insert_slice {tr} into %e{where} : {tile} into {panels}')} : {panels}")
    b("}")
    b(f"scf.yield %col : {panels}")
    b("}")

    def transpose_into(cur: str, src_where: str, dst_where: str) -> str:
        return _into_panels(b, cur, src_where, dst_where, t2, panels, lambda src, dst:
                            f"linalg.transpose ins({src} : {t2}) outs({dst} : {t2}) permutation = [1, 0]")

    # the last kk % lanes rows of every full panel
    rest_k = b.op("rk", f"arith.subi {kk}, {kk_full} : index")
    b(f"%bottom = scf.for %p = {zero} to {full_panels} step {one} iter_args(%f = %tiles) -> ({panels}) {{")
    first = b.op("j", f"arith.muli %p, {width} : index")
    b(f"scf.yield {transpose_into('%f', f'[{first}, {kk_full}] [{width}, {rest_k}] [1, 1]', f'[%p, {kk_full}, 0] [1, {rest_k}, {width}] [1, 1, 1]')} : {panels}")
    b("}")
    # the last panel's bn % nr columns, every row (when there are any: the panel exists only then)
    rest_n = b.op("rn", f"arith.subi {bn}, {bn_full} : index")
    packed = _last_panel(b, "%bottom", rest_n, lambda cur: transpose_into(
        cur, f"[{bn_full}, 0] [{rest_n}, {kk}] [1, 1]", f"[{full_panels}, 0, 0] [1, {kk}, {rest_n}] [1, 1, 1]"), panels)
    b(f"return {packed} : {panels}")
    return (f"func.func private @{pack_name(uks)}(%src: {t2}, %dst: {panels}) -> {panels} "
            f"attributes {{ftuner.pack}} {{\n{b.text()}\n}}")


def emit_copy_pack(uks: UKernelSet) -> str:
    """B block [kk x bn] (stored K x N) -> nr-wide micro-panels [ceil(bn/nr), kk, nr], written as vector
    code: each panel row one nr-wide vector read and written, the last panel's bn % nr columns under a
    mask (lanes past bn are never read nor written). As linalg.copy loops LLVM left it scalar: a third
    of a conv layer's GEMM time went to this copy."""
    t2, panels, nr, dt = _dyn(2, uks.dtype), _panels(uks), uks.nr, uks.dtype
    vec = f"vector<{nr}x{dt}>"
    b = IRBody()
    zero, one, width = b.const(0), b.const(1), b.const(nr)
    pad = b.op("pad", f"arith.constant 0.0 : {dt}")
    kk = b.op("kk", f"tensor.dim %src, {zero} : {t2}")
    bn = b.op("bn", f"tensor.dim %src, {one} : {t2}")
    full_panels = b.op("np", f"arith.divui {bn}, {width} : index")
    bn_full = b.op("bnf", f"arith.muli {full_panels}, {width} : index")

    def rows_into(cur: str, panel: str, col: str, mask: str | None) -> str:
        """Every row of panel `panel` from the block's columns starting at `col` (under `mask`)."""
        k, into = b.fresh("k"), b.fresh("e")
        masked = f", {mask}" if mask else ""
        result = b.op("rows", f"scf.for {k} = {zero} to {kk} step {one} iter_args({into} = {cur}) -> ({panels}) {{")
        row = b.op("v", f"vector.transfer_read %src[{k}, {col}], {pad}{masked} {{in_bounds = [true]}} : {t2}, {vec}")
        put = b.op("w", f"vector.transfer_write {row}, {into}[{panel}, {k}, {zero}]{masked} {{in_bounds = [true]}} "
                        f": {vec}, {panels}")
        b(f"scf.yield {put} : {panels}")
        b("}")
        return result

    b(f"%full = scf.for %p = {zero} to {full_panels} step {one} iter_args(%d = %dst) -> ({panels}) {{")
    b(f"scf.yield {rows_into('%d', '%p', b.op('j', f'arith.muli %p, {width} : index'), None)} : {panels}")
    b("}")
    rest_n = b.op("rn", f"arith.subi {bn}, {bn_full} : index")
    mask = b.op("mask", f"vector.create_mask {rest_n} : vector<{nr}xi1>")
    packed = _last_panel(b, "%full", rest_n, lambda cur: rows_into(cur, full_panels, bn_full, mask), panels)
    b(f"return {packed} : {panels}")
    return (f"func.func private @{copy_pack_name(uks)}(%src: {t2}, %dst: {panels}) -> {panels} "
            f"attributes {{ftuner.pack}} {{\n{b.text()}\n}}")


def emit_rows(rows: int, uks: UKernelSet, zero: bool = False, packed: bool = False) -> str:
    """Rows [lo, hi) of a block, `rows` at a time, every column strip; hi - lo is a multiple of rows.
    With `zero`, the uKernels overwrite C instead of accumulating into it. B is the block itself
    (kk x bn, read in place) or, with `packed`, its micro-panels (emit_pack, emit_copy_pack)."""
    t, dt = _dyn(2, uks.dtype), uks.dtype
    tb = _panels(uks) if packed else t
    b = IRBody()
    one = b.const(1)
    kk = b.op("kk", f"tensor.dim %a, {one} : {t}")
    bn = b.op("bn", f"tensor.dim %c, {one} : {t}")
    col_ranges = strip_bounds(bn, uks.col_sizes, uks.tail_width, IRArith(b))
    width = b.const(uks.nr) if packed else None      # panel p of column j: j / nr, at j % nr
    b(f"%res = scf.for %i = %lo to %hi step {b.const(rows)} iter_args(%acc = %c) -> ({t}) {{")
    acc = "%acc"
    for cols, lo, hi in col_ranges:
        j, cur = b.fresh("j"), b.fresh("t")
        # the masked tail's loop runs once when there is a tail (hi - lo < its step), its width hi - j
        step = b.const(uks.tail_width if cols == MASKED else cols)
        result = b.op("cols", f"scf.for {j} = {lo} to {hi} step {step} iter_args({cur} = {acc}) -> ({t}) {{")
        size = b.op("w", f"arith.subi {hi}, {j} : index") if cols == MASKED else str(cols)
        static = "?" if cols == MASKED else cols
        tile_a = f"tensor<{rows}x?x{dt}>"
        tile_b = f"tensor<?x{static}x{dt}>"
        tile_c = f"tensor<{rows}x{static}x{dt}>"
        sa = b.op("a", f"tensor.extract_slice %a[%i, 0] [{rows}, {kk}] [1, 1] : {t} to {tile_a}")
        if packed:
            panel, col = b.op("p", f"arith.divui {j}, {width} : index"), b.op("q", f"arith.remui {j}, {width} : index")
            sb = b.op("b", f"tensor.extract_slice %b[{panel}, 0, {col}] [1, {kk}, {size}] [1, 1, 1] : {tb} to {tile_b}")
        else:
            sb = b.op("b", f"tensor.extract_slice %b[0, {j}] [{kk}, {size}] [1, 1] : {t} to {tile_b}")
        sc = b.op("ct", f"tensor.extract_slice {cur}[%i, {j}] [{rows}, {size}] [1, 1] : {t} to {tile_c}")
        types = f"({tile_a}, {tile_b}, {tile_c}) -> {tile_c}"

        def call(callee: str) -> str:
            return b.op("uk", f"func.call @{callee}({sa}, {sb}, {sc}) : {types}")
        if cols != MASKED:
            out = call(ukernel_name(rows, cols, dt, zero))
        else:                           # the narrowest masked kernel that holds the tail
            def masked(widths: tuple[int, ...]) -> str:
                if len(widths) == 1:
                    return call(masked_ukernel_name(rows, widths[0], dt, zero))
                fits = b.op("fits", f"arith.cmpi ule, {size}, {b.const(widths[0])} : index")
                return b.if_else("uk", fits, tile_c, lambda: masked(widths[:1]), lambda: masked(widths[1:]))
            out = masked(uks.masked_widths)
        put = b.op("w", f"tensor.insert_slice {out} into {cur}[%i, {j}] [{rows}, {size}] [1, 1] : {tile_c} into {t}")
        b(f"scf.yield {put} : {t}")
        b("}")
        acc = result
    b(f"scf.yield {acc} : {t}")
    b("}")
    b(f"return %res : {t}")
    return (f"func.func private @{rows_name(rows, uks, zero, packed)}(%a: {t}, %b: {tb}, %c: {t}, %lo: index, %hi: index) -> {t}"
            f" attributes {{ftuner.rows = {rows} : i64}} {{\n{b.text()}\n}}")


def emit_dispatch(uks: UKernelSet, zero_init: bool = False, prepacked: bool = False) -> str:
    """The dispatch function: (A, B, C_init) -> C_init + A.B, all operands fully dynamic. With
    `zero_init`: (A, B, C) -> A.B, C only giving the result's storage (the op's init was a zero fill).
    With `prepacked` (a matmul_transpose_b set): B is already the micro-panels of the whole N x K
    operand, [ceil(N/nr), K, nr] (a constant weight packed at compile time, codegen/weight_panels.py);
    a block reads its panels in place."""
    rank = 3 if uks.batched else 2
    t, t2, dt = _dyn(rank, uks.dtype), _dyn(2, uks.dtype), uks.dtype
    tb = _panels(uks) if prepacked else t
    b = IRBody()
    zero, one = b.const(0), b.const(1)
    lead = 1 if uks.batched else 0          # index of the M axis in C
    m = b.op("m", f"tensor.dim %C, {b.const(lead)} : {t}")
    n = b.op("n", f"tensor.dim %C, {b.const(lead + 1)} : {t}")
    k = b.op("k", f"tensor.dim %A, {b.const(lead + 1)} : {t}")
    batch = b.op("batch", f"tensor.dim %C, {zero} : {t}") if uks.batched else one
    mc, nc = block_shape(uks, batch, m, n, IRArith(b))     # the cache block, as ukernel.cover computes it
    if uks.batched:
        b(f"%res = scf.forall (%p, %i0, %j0) = (0, 0, 0) to ({batch}, {m}, {n}) step (1, {mc}, {nc}) "
          f"shared_outs(%o = %C) -> ({t}) {{")
        lead_off, lead_size, lead_stride = "%p, ", "1, ", "1, "
    else:
        b(f"%res = scf.forall (%i0, %j0) = (0, 0) to ({m}, {n}) step ({mc}, {nc}) shared_outs(%o = %C) -> ({t}) {{")
        lead_off = lead_size = lead_stride = ""
    bm = b.op("bm", f"arith.minui {b.op('left', f'arith.subi {m}, %i0 : index')}, {mc} : index")
    bn = b.op("bn", f"arith.minui {b.op('left', f'arith.subi {n}, %j0 : index')}, {nc} : index")
    cblk = b.op("cblk", f"tensor.extract_slice %o[{lead_off}%i0, %j0] [{lead_size}{bm}, {bn}] "
                        f"[{lead_stride}1, 1] : {t} to {t2}")
    row_ranges = strip_bounds(bm, uks.row_sizes, ar=IRArith(b))
    kc = b.const(uks.kc)
    chooses_pack = packs_b(uks) and not uks.transpose_b and not prepacked    # decided per block, at run time
    if chooses_pack:
        many_rows = b.op("big", f"arith.cmpi uge, {bm}, {b.const(PACK_MIN_ROWS)} : index")
        some_rows = b.op("some", f"arith.cmpi uge, {bm}, {b.const(PACK_MIN_ROW_STRIPS * uks.mr)} : index")
        far_rows = b.op("far", f"arith.cmpi uge, {n}, {b.const(FAR_ROW_BYTES // (ELEMENT_BITS[dt] // 8))} : index")
        pack_b = b.op("pack", f"arith.ori {many_rows}, {b.op('wide', f'arith.andi {some_rows}, {far_rows} : i1')} : i1")

    def k_block(k0: str, c_in: str, overwrite: bool) -> str:
        """The block's rows over reduction indices [k0, k0 + kc): C_in + A.B, or A.B with `overwrite`."""
        kk = b.op("kk", f"arith.minui {b.op('left', f'arith.subi {k}, {k0} : index')}, {kc} : index")
        ablk = b.op("ablk", f"tensor.extract_slice %A[{lead_off}%i0, {k0}] [{lead_size}{bm}, {kk}] "
                            f"[{lead_stride}1, 1] : {t} to {t2}")
        if prepacked:
            first = b.op("p0", f"arith.divui %j0, {b.const(uks.nr)} : index")     # nc is a multiple of nr
            count = b.op("np", f"arith.ceildivui {bn}, {b.const(uks.nr)} : index")
            panels = b.op("bblk", f"tensor.extract_slice %B[{first}, {k0}, 0] [{count}, {kk}, {uks.nr}] "
                                  f"[1, 1, 1] : {tb} to {tb}")
            return row_strips(ablk, panels, c_in, overwrite, packed=True)
        if uks.transpose_b:
            bt = b.op("bt", f"tensor.extract_slice %B[{lead_off}%j0, {k0}] [{lead_size}{bn}, {kk}] "
                            f"[{lead_stride}1, 1] : {t} to {t2}")
            return row_strips(ablk, pack(pack_name(uks), bt, kk), c_in, overwrite, packed=True)
        bblk = b.op("bblk", f"tensor.extract_slice %B[{lead_off}{k0}, %j0] [{lead_size}{kk}, {bn}] "
                            f"[{lead_stride}1, 1] : {t} to {t2}")
        if not chooses_pack:
            return row_strips(ablk, bblk, c_in, overwrite, packed=False)
        return b.if_else("blk", pack_b, t2,
                         lambda: row_strips(ablk, pack(copy_pack_name(uks), bblk, kk), c_in, overwrite, packed=True),
                         lambda: row_strips(ablk, bblk, c_in, overwrite, packed=False))

    def pack(function: str, block: str, kk: str) -> str:
        """`block` packed by `function` into a fresh panel buffer of ceil(bn / nr) panels."""
        panels, ptype = b.op("np", f"arith.ceildivui {bn}, {b.const(uks.nr)} : index"), _panels(uks)
        empty = b.op("pack", f"tensor.empty({panels}, {kk}) : {ptype}")
        return b.op("bblk", f"func.call @{function}({block}, {empty}) : ({t2}, {ptype}) -> {ptype}")

    def row_strips(ablk: str, bblk: str, c_in: str, overwrite: bool, packed: bool) -> str:
        cur, tb = c_in, _panels(uks) if packed else t2
        for rows, lo, hi in row_ranges:
            cur = b.op("rows", f"func.call @{rows_name(rows, uks, overwrite, packed)}({ablk}, {bblk}, {cur}, {lo}, "
                               f"{hi}) : ({t2}, {tb}, {t2}, index, index) -> {t2}")
        return cur

    start, init = zero, cblk
    if zero_init:
        # the first reduction block writes C (it is never read: the op's init was zeros); K = 0 leaves zeros
        empty_k = b.op("k0", f"arith.cmpi eq, {k}, {zero} : index")

        def zeros() -> str:
            fill_zero = b.op("z", f"arith.constant 0.0 : {dt}")
            return b.op("zc", f"linalg.fill ins({fill_zero} : {dt}) outs({cblk} : {t2}) -> {t2}")
        start, init = kc, b.if_else("first", empty_k, t2, zeros, lambda: k_block(zero, cblk, overwrite=True))
    b(f"%acc = scf.for %k0 = {start} to {k} step {kc} iter_args(%cc = {init}) -> ({t2}) {{")
    b(f"scf.yield {k_block('%k0', '%cc', overwrite=False)} : {t2}")
    b("}")
    b("scf.forall.in_parallel {")
    b(f"tensor.parallel_insert_slice %acc into %o[{lead_off}%i0, %j0] [{lead_size}{bm}, {bn}] "
      f"[{lead_stride}1, 1] : {t2} into {t}")
    b("}")
    b("}")
    b(f"return %res : {t}")
    return (f"func.func private @{dispatch_name(uks, zero_init, prepacked)}(%A: {t}, %B: {tb}, %C: {t}) -> {t}"
            f" attributes {{ftuner.dispatch = \"{uks.family}\"}} {{\n{b.text()}\n}}")


def _row_layouts(uks: UKernelSet, prepacked: bool) -> tuple[bool, ...]:
    """The B layouts the row strips read: micro-panels (packed), the block in place, or both."""
    if uks.transpose_b or prepacked:
        return (True,)
    return (True, False) if packs_b(uks) else (False,)


def emit_all(uks: UKernelSet, zero_init: bool = False, prepacked: bool = False) -> dict[str, str]:
    """symbol name -> function text, for the dispatch and everything it calls."""
    funcs = {dispatch_name(uks, zero_init, prepacked): emit_dispatch(uks, zero_init, prepacked)}
    for zero in ((False, True) if zero_init else (False,)):
        for rows in uks.row_sizes:
            for packed in _row_layouts(uks, prepacked):
                funcs[rows_name(rows, uks, zero, packed)] = emit_rows(rows, uks, zero, packed)
        for rows, cols in uks.ukernels():
            funcs[ukernel_name(rows, cols, uks.dtype, zero)] = emit_ukernel(rows, cols, uks.dtype, zero,
                                                                            unroll=cols == uks.nr)
        if uks.tail_width > 1:          # else every column strip is a whole vector (strip_bounds)
            for rows in uks.row_sizes:
                for width in uks.masked_widths:
                    funcs[masked_ukernel_name(rows, width, uks.dtype, zero)] = emit_masked_ukernel(
                        rows, width, uks.dtype, zero, uks.chains, uks.lanes)
    if prepacked:
        return funcs
    if packs_b(uks) and not uks.transpose_b:
        funcs[copy_pack_name(uks)] = emit_copy_pack(uks)
    if uks.transpose_b:
        funcs[pack_name(uks)] = emit_pack(uks)
        funcs[transpose_name(uks.lanes, uks.dtype)] = emit_transpose_ukernel(uks.lanes, uks.dtype)
    return funcs
