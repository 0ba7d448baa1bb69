"""Emit the GPU code of a matmul-family op for a GPU uKernel set, as MLIR text.

  gpu.module   one kernel per uKernel: a static `bm x bn` block tile; per `bk` reduction step, the block
               stages its A and B tiles in shared memory (loads coalesced along the contiguous axis,
               zero beyond K), `gpu.barrier`, then each thread accumulates its `tm x tn` tile in
               registers with fma; finally C += the accumulators. The body kernel runs only on full
               tiles (no row/column guards); the edge kernel guards rows and columns.
  dispatch     host function on memrefs: grid sizes from `memref.dim` at run time; the body kernel
               over the full tiles, the edge kernel over the bottom rows and the right columns.
"""
from __future__ import annotations

from ..ukernel.gpu_space import GpuTile, GpuUKernelSet
from .text import IRBody

WORKGROUP = "#gpu.address_space<workgroup>"


def memref_type(rank: int) -> str:
    return f"memref<{'?x' * rank}f32, strided<[{', '.join(['?'] * rank)}], offset: ?>>"


def module_name(uks: GpuUKernelSet) -> str:
    b, e = uks.body, uks.edge
    return f"ftuner_gpu_{uks.family}_{b.bm}x{b.bn}x{b.bk}_{b.tm}x{b.tn}_edge{e.bm}x{e.bn}x{e.bk}_{e.tm}x{e.tn}"


def dispatch_name(uks: GpuUKernelSet) -> str:
    return f"{module_name(uks)}_dispatch"


def _shared_type(tile: GpuTile, cols: int) -> str:
    return f"memref<{tile.bk}x{cols}xf32, {WORKGROUP}>"


class _KernelWriter:
    def __init__(self, tile: GpuTile, uks: GpuUKernelSet, guard_edges: bool):
        self.tile, self.uks, self.guard = tile, uks, guard_edges
        self.mt = memref_type(3 if uks.batched else 2)
        self.b = IRBody()

    def idx(self, hint: str, expr: str) -> str:
        return self.b.op(hint, f"{expr} : index")

    def prologue(self) -> None:
        b, t = self.b, self.tile
        self.zero = b.op("zero", "arith.constant 0.0 : f32")
        self.tid = b.op("tid", "gpu.thread_id x")
        bx, by = b.op("bx", "gpu.block_id x"), b.op("by", "gpu.block_id y")
        self.lead = f"{b.op('bz', 'gpu.block_id z')}, " if self.uks.batched else ""
        self.row0 = self.idx("row0", f"arith.addi %row0, {self.idx('o', f'arith.muli {by}, {b.const(t.bm)}')}")
        self.col0 = self.idx("col0", f"arith.addi %col0, {self.idx('o', f'arith.muli {bx}, {b.const(t.bn)}')}")
        across = b.const(t.bn // t.tn)
        self.rows = self.idx("rb", f"arith.muli {self.idx('ty', f'arith.divui {self.tid}, {across}')}, {b.const(t.tm)}")
        self.cols = self.idx("cb", f"arith.muli {self.idx('tx', f'arith.remui {self.tid}, {across}')}, {b.const(t.tn)}")

    def stage(self, operand: str, shared: str, cols: int, outer: int, inner: int, layout: str) -> None:
        """Copy an `outer x inner` tile (inner contiguous in memory) into `shared`[k][m or n]; zero past
        K (and past M or N in the edge kernel). `layout` names the operand's axes: mk, kn or nk."""
        b, t = self.b, self.tile
        b(f"scf.for %e = {b.const(0)} to {b.const(outer * inner // t.threads)} step {b.const(1)} {{")
        flat = self.idx("flat", f"arith.addi {self.idx('o', f'arith.muli %e, {b.const(t.threads)}')}, {self.tid}")
        o = self.idx("o", f"arith.divui {flat}, {b.const(inner)}")
        i = self.idx("i", f"arith.remui {flat}, {b.const(inner)}")
        k_local, mn_local = (o, i) if layout == "kn" else (i, o)
        g_k = self.idx("gk", f"arith.addi %k0, {k_local}")
        g_mn = self.idx("gmn", f"arith.addi {self.row0 if layout == 'mk' else self.col0}, {mn_local}")
        inside = b.op("in", f"arith.cmpi ult, {g_k}, %K : index")
        if self.guard:
            bound = "%M" if layout == "mk" else "%N"
            inside = b.op("in", f"arith.andi {inside}, {b.op('in', f'arith.cmpi ult, {g_mn}, {bound} : index')} : i1")
        at = f"{g_k}, {g_mn}" if layout == "kn" else f"{g_mn}, {g_k}"
        v = b.op("v", f"scf.if {inside} -> (f32) {{")
        b(f"%x = memref.load {operand}[{self.lead}{at}] : {self.mt}")
        b("scf.yield %x : f32")
        b("} else {")
        b(f"scf.yield {self.zero} : f32")
        b("}")
        b(f"memref.store {v}, {shared}[{k_local}, {mn_local}] : {_shared_type(t, cols)}")
        b("}")

    def reduction_step(self, accs: list[tuple[int, int]], f32s: str) -> None:
        b, t = self.b, self.tile
        names = ", ".join(f"%p{i}_{j} = %acc{i}_{j}" for i, j in accs)
        b(f"%step:{len(accs)} = scf.for %kk = {b.const(0)} to {b.const(t.bk)} step {b.const(1)} "
          f"iter_args({names}) -> ({f32s}) {{")
        a = [b.op("a", f"memref.load %As[%kk, {self.idx('r', f'arith.addi {self.rows}, {b.const(i)}')}] : "
                       f"{_shared_type(t, t.bm)}") for i in range(t.tm)]
        w = [b.op("w", f"memref.load %Bs[%kk, {self.idx('q', f'arith.addi {self.cols}, {b.const(j)}')}] : "
                       f"{_shared_type(t, t.bn)}") for j in range(t.tn)]
        fmas = [b.op("f", f"math.fma {a[i]}, {w[j]}, %p{i}_{j} : f32") for i, j in accs]
        b(f"scf.yield {', '.join(fmas)} : {f32s}")
        b("}")

    def write_back(self, accs: list[tuple[int, int]]) -> None:
        b, t = self.b, self.tile
        rows = [self.idx("row", f"arith.addi {self.row0}, {self.idx('o', f'arith.addi {self.rows}, {b.const(i)}')}")
                for i in range(t.tm)]
        cols = [self.idx("col", f"arith.addi {self.col0}, {self.idx('o', f'arith.addi {self.cols}, {b.const(j)}')}")
                for j in range(t.tn)]
        for n, (i, j) in enumerate(accs):
            if self.guard:
                ok = b.op("ok", f"arith.andi {b.op('in', f'arith.cmpi ult, {rows[i]}, %M : index')}, "
                                f"{b.op('in', f'arith.cmpi ult, {cols[j]}, %N : index')} : i1")
                b(f"scf.if {ok} {{")
            old = b.op("old", f"memref.load %C[{self.lead}{rows[i]}, {cols[j]}] : {self.mt}")
            new = b.op("new", f"arith.addf {old}, %sum#{n} : f32")
            b(f"memref.store {new}, %C[{self.lead}{rows[i]}, {cols[j]}] : {self.mt}")
            if self.guard:
                b("}")

    def emit(self, name: str) -> str:
        b, t = self.b, self.tile
        self.prologue()
        accs = [(i, j) for i in range(t.tm) for j in range(t.tn)]
        f32s = ", ".join(["f32"] * len(accs))
        init = ", ".join(f"%acc{i}_{j} = {self.zero}" for i, j in accs)
        b(f"%sum:{len(accs)} = scf.for %k0 = {b.const(0)} to %K step {b.const(t.bk)} iter_args({init}) -> ({f32s}) {{")
        self.stage("%A", "%As", t.bm, t.bm, t.bk, "mk")
        if self.uks.transpose_b:
            self.stage("%B", "%Bs", t.bn, t.bn, t.bk, "nk")
        else:
            self.stage("%B", "%Bs", t.bn, t.bk, t.bn, "kn")
        b("gpu.barrier")
        self.reduction_step(accs, f32s)
        b("gpu.barrier")
        b(f"scf.yield {', '.join(f'%step#{n}' for n in range(len(accs)))} : {f32s}")
        b("}")
        self.write_back(accs)
        b("gpu.return")
        mt = self.mt
        return (f"gpu.func @{name}(%A: {mt}, %B: {mt}, %C: {mt}, %row0: index, %col0: index, %M: index, "
                f"%N: index, %K: index) workgroup(%As : {_shared_type(t, t.bm)}, %Bs : {_shared_type(t, t.bn)}) "
                f"kernel attributes {{known_block_size = array<i32: {t.threads}, 1, 1>}} {{\n{b.text()}\n}}")


def emit_gpu_module(uks: GpuUKernelSet) -> str:
    body = _KernelWriter(uks.body, uks, guard_edges=False).emit("body")
    edge = _KernelWriter(uks.edge, uks, guard_edges=True).emit("edge")
    return f"gpu.module @{module_name(uks)} {{\n{body}\n{edge}\n}}"


def emit_dispatch(uks: GpuUKernelSet) -> str:
    """Host side: split the output into full body tiles and the edges, launch each with its grid."""
    rank = 3 if uks.batched else 2
    mt = memref_type(rank)
    body, edge = uks.body, uks.edge
    b = IRBody()
    zero, one = b.const(0), b.const(1)
    lead = 1 if uks.batched else 0
    m = b.op("m", f"memref.dim %C, {b.const(lead)} : {mt}")
    n = b.op("n", f"memref.dim %C, {b.const(lead + 1)} : {mt}")
    k = b.op("k", f"memref.dim %A, {b.const(lead + 1)} : {mt}")
    batch = b.op("batch", f"memref.dim %C, {zero} : {mt}") if uks.batched else one
    bm, bn, ebm, ebn = (b.const(v) for v in (body.bm, body.bn, edge.bm, edge.bn))
    tiles_m, tiles_n = b.op("tm", f"arith.divui {m}, {bm} : index"), b.op("tn", f"arith.divui {n}, {bn} : index")
    full_m = b.op("fm", f"arith.muli {tiles_m}, {bm} : index")
    full_n = b.op("fn", f"arith.muli {tiles_n}, {bn} : index")
    def args(row0: str, col0: str) -> str:
        return (f"args(%A : {mt}, %B : {mt}, %C : {mt}, {row0} : index, {col0} : index, {m} : index, "
                f"{n} : index, {k} : index)")

    def launch(kernel: str, tile, gx: str, gy: str, row0: str, col0: str) -> None:
        some = b.op("some", f"arith.andi {b.op('nz', f'arith.cmpi ugt, {gx}, {zero} : index')}, "
                            f"{b.op('nz', f'arith.cmpi ugt, {gy}, {zero} : index')} : i1")
        b(f"scf.if {some} {{")
        b(f"gpu.launch_func @{module_name(uks)}::@{kernel} blocks in ({gx}, {gy}, {batch}) "
          f"threads in ({b.const(tile.threads)}, {one}, {one}) {args(row0, col0)}")
        b("}")

    launch("body", body, tiles_n, tiles_m, zero, zero)
    # bottom rows [full_m, M) x all columns; right columns [full_n, N) x rows [0, full_m)
    rest_m = b.op("rm", f"arith.subi {m}, {full_m} : index")
    rest_n = b.op("rn", f"arith.subi {n}, {full_n} : index")
    launch("edge", edge, b.op("gx", f"arith.ceildivui {n}, {ebn} : index"),
           b.op("gy", f"arith.ceildivui {rest_m}, {ebm} : index"), full_m, zero)
    launch("edge", edge, b.op("gx", f"arith.ceildivui {rest_n}, {ebn} : index"),
           b.op("gy", f"arith.ceildivui {full_m}, {ebm} : index"), zero, full_n)
    b("return")
    return (f"func.func private @{dispatch_name(uks)}(%A: {mt}, %B: {mt}, %C: {mt}) "
            f"attributes {{ftuner.dispatch = \"{uks.family}\"}} {{\n{b.text()}\n}}")
