"""Emit the GPU code of a matmul-family op for a GPU uKernel set, with the MLIR Python builders.

  gpu.module   one kernel per uKernel: a static `bm x bn` block tile; per `bk` reduction step, the block
               stages its A and B tiles in shared memory (loads coalesced along the contiguous axis,
               zero beyond K), `gpu.barrier`, then each thread accumulates its `tm x tn` tile in
               registers with fma; finally C += the accumulators. The body kernel runs only on full
               tiles (no row/column guards); the edge kernel guards rows and columns.
  dispatch     host function on memrefs: grid sizes from `memref.dim` at run time; the body kernel
               over the full tiles, the edge kernel over the bottom rows and the right columns.
Both are built at the caller's insertion point and location (passes/tile.py); `emit_all` names them
with their builders.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, gpu, math, memref, scf

from ..ir.attributes import DISPATCH_ATTR
from ..ir.build import cmp, float_constant, for_loop, if_else, index, private_function
from ..ukernel.gpu_space import GpuTile, GpuUKernelSet

WORKGROUP = "#gpu.address_space<workgroup>"
_ULT, _UGT = arith.CmpIPredicate.ult, arith.CmpIPredicate.ugt


def memref_type(rank: int) -> str:
    return f"memref<{'?x' * rank}f32, strided<[{', '.join(['?'] * rank)}], offset: ?>>"


def module_name(uks: GpuUKernelSet) -> str:
    b, e = uks.body, uks.edge
    return f"ftuner_gpu_{uks.family}_{b.bm}x{b.bn}x{b.bk}_{b.tm}x{b.tn}_edge{e.bm}x{e.bn}x{e.bk}_{e.tm}x{e.tn}"


def dispatch_name(uks: GpuUKernelSet) -> str:
    return f"{module_name(uks)}_dispatch"


def _shared_type(tile: GpuTile, cols: int) -> ir.Type:
    return ir.Type.parse(f"memref<{tile.bk}x{cols}xf32, {WORKGROUP}>")


def _both(a: ir.Value, b: ir.Value) -> ir.Value:
    return arith.AndIOp(a, b).result


def _when(condition: ir.Value, build) -> None:
    """`scf.if condition` (no results) around what `build()` emits."""
    branch = scf.IfOp(condition)
    with ir.InsertionPoint(branch.then_block):
        build()
        scf.YieldOp([])


class _Kernel:
    """One kernel's body: the block's tile of C accumulated over K in shared-memory steps."""

    def __init__(self, tile: GpuTile, uks: GpuUKernelSet, guard_edges: bool, args, shared):
        self.tile, self.uks, self.guard = tile, uks, guard_edges
        self.A, self.B, self.C, self.row_base, self.col_base, self.M, self.N, self.K = args
        self.As, self.Bs = shared

    def prologue(self) -> None:
        t = self.tile
        self.zero = float_constant(ir.F32Type.get())
        self.tid = gpu.ThreadIdOp(gpu.Dimension.x).result
        bx, by = gpu.BlockIdOp(gpu.Dimension.x).result, gpu.BlockIdOp(gpu.Dimension.y).result
        self.lead = [gpu.BlockIdOp(gpu.Dimension.z).result] if self.uks.batched else []
        self.row0 = arith.AddIOp(self.row_base, arith.MulIOp(by, index(t.bm)).result).result
        self.col0 = arith.AddIOp(self.col_base, arith.MulIOp(bx, index(t.bn)).result).result
        across = index(t.bn // t.tn)
        self.rows = arith.MulIOp(arith.DivUIOp(self.tid, across).result, index(t.tm)).result
        self.cols = arith.MulIOp(arith.RemUIOp(self.tid, across).result, index(t.tn)).result

    def stage(self, operand, shared, outer: int, inner: int, layout: str, k0) -> None:
        """Copy an `outer x inner` tile (inner contiguous in memory) into `shared`[k][m or n]; zero past
        K (and past M or N in the edge kernel). `layout` names the operand's axes: mk, kn or nk."""
        t = self.tile

        def element(e, _carried):
            flat = arith.AddIOp(arith.MulIOp(e, index(t.threads)).result, self.tid).result
            o, i = arith.DivUIOp(flat, index(inner)).result, arith.RemUIOp(flat, index(inner)).result
            k_local, mn_local = (o, i) if layout == "kn" else (i, o)
            g_k = arith.AddIOp(k0, k_local).result
            g_mn = arith.AddIOp(self.row0 if layout == "mk" else self.col0, mn_local).result
            inside = cmp(_ULT, g_k, self.K)
            if self.guard:
                inside = _both(inside, cmp(_ULT, g_mn, self.M if layout == "mk" else self.N))
            at = [g_k, g_mn] if layout == "kn" else [g_mn, g_k]
            value = if_else(inside, [self.zero.type], lambda: [memref.LoadOp(operand, self.lead + at).result],
                            lambda: [self.zero])[0]
            memref.StoreOp(value, shared, [k_local, mn_local])
            return []
        for_loop(index(0), index(outer * inner // t.threads), index(1), [], element)

    def reduction_step(self, accs: list[tuple[int, int]], carried) -> list[ir.Value]:
        t = self.tile

        def step(kk, p):
            a = [memref.LoadOp(self.As, [kk, arith.AddIOp(self.rows, index(i)).result]).result for i in range(t.tm)]
            w = [memref.LoadOp(self.Bs, [kk, arith.AddIOp(self.cols, index(j)).result]).result for j in range(t.tn)]
            return [math.FmaOp(a[i], w[j], x).result for (i, j), x in zip(accs, p)]
        return for_loop(index(0), index(t.bk), index(1), carried, step)

    def write_back(self, accs: list[tuple[int, int]], sums) -> None:
        t = self.tile
        rows = [arith.AddIOp(self.row0, arith.AddIOp(self.rows, index(i)).result).result for i in range(t.tm)]
        cols = [arith.AddIOp(self.col0, arith.AddIOp(self.cols, index(j)).result).result for j in range(t.tn)]
        for (i, j), total in zip(accs, sums):
            def add() -> None:
                at = self.lead + [rows[i], cols[j]]
                memref.StoreOp(arith.AddFOp(memref.LoadOp(self.C, at).result, total).result, self.C, at)
            if self.guard:
                _when(_both(cmp(_ULT, rows[i], self.M), cmp(_ULT, cols[j], self.N)), add)
            else:
                add()

    def build(self) -> None:
        t = self.tile
        self.prologue()
        accs = [(i, j) for i in range(t.tm) for j in range(t.tn)]

        def k_step(k0, carried):
            self.stage(self.A, self.As, t.bm, t.bk, "mk", k0)
            if self.uks.transpose_b:
                self.stage(self.B, self.Bs, t.bn, t.bk, "nk", k0)
            else:
                self.stage(self.B, self.Bs, t.bk, t.bn, "kn", k0)
            gpu.BarrierOp()
            step = self.reduction_step(accs, carried)
            gpu.BarrierOp()
            return step
        sums = for_loop(index(0), self.K, index(t.bk), [self.zero] * len(accs), k_step)
        self.write_back(accs, sums)
        gpu.ReturnOp([])


def _emit_kernel(name: str, tile: GpuTile, uks: GpuUKernelSet, guard_edges: bool) -> None:
    """gpu.func @name(A, B, C, row0, col0, M, N, K) with workgroup buffers for the A and B tiles."""
    mt, index_type = ir.Type.parse(memref_type(3 if uks.batched else 2)), ir.IndexType.get()
    inputs = [mt, mt, mt] + [index_type] * 5
    shared = [_shared_type(tile, tile.bm), _shared_type(tile, tile.bn)]
    fn = gpu.GPUFuncOp(ir.FunctionType.get(inputs, []), sym_name=name, kernel=True,
                       known_block_size=[tile.threads, 1, 1])
    fn.attributes["workgroup_attributions"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), len(shared))
    location = ir.Location.current
    entry = fn.body.blocks.append(*inputs, *shared, arg_locs=[location] * (len(inputs) + len(shared)))
    with ir.InsertionPoint(entry):
        _Kernel(tile, uks, guard_edges, entry.arguments[:len(inputs)], entry.arguments[len(inputs):]).build()


def emit_gpu_module(uks: GpuUKernelSet):
    module = gpu.GPUModuleOp(module_name(uks))
    with ir.InsertionPoint(module.bodyRegion.blocks.append()):
        _emit_kernel("body", uks.body, uks, guard_edges=False)
        _emit_kernel("edge", uks.edge, uks, guard_edges=True)
    return module


def emit_dispatch(uks: GpuUKernelSet):
    """Host side: split the output into full body tiles and the edges, launch each with its grid."""
    rank = 3 if uks.batched else 2
    mt = ir.Type.parse(memref_type(rank))
    body, edge = uks.body, uks.edge
    lead = 1 if uks.batched else 0

    def build(A, B, C):
        zero, one = index(0), index(1)
        m, n = memref.DimOp(C, index(lead)).result, memref.DimOp(C, index(lead + 1)).result
        k = memref.DimOp(A, index(lead + 1)).result
        batch = memref.DimOp(C, zero).result if uks.batched else one
        bm, bn, ebm, ebn = (index(v) for v in (body.bm, body.bn, edge.bm, edge.bn))
        tiles_m, tiles_n = arith.DivUIOp(m, bm).result, arith.DivUIOp(n, bn).result
        full_m, full_n = arith.MulIOp(tiles_m, bm).result, arith.MulIOp(tiles_n, bn).result

        def launch(kernel: str, tile, gx, gy, row0, col0) -> None:
            some = _both(cmp(_UGT, gx, zero), cmp(_UGT, gy, zero))
            _when(some, lambda: gpu.LaunchFuncOp([module_name(uks), kernel], (gx, gy, batch),
                                                 (index(tile.threads), one, one), [A, B, C, row0, col0, m, n, k]))

        launch("body", body, tiles_n, tiles_m, zero, zero)
        # bottom rows [full_m, M) x all columns; right columns [full_n, N) x rows [0, full_m)
        rest_m, rest_n = arith.SubIOp(m, full_m).result, arith.SubIOp(n, full_n).result
        launch("edge", edge, arith.CeilDivUIOp(n, ebn).result, arith.CeilDivUIOp(rest_m, ebm).result, full_m, zero)
        launch("edge", edge, arith.CeilDivUIOp(rest_n, ebn).result, arith.CeilDivUIOp(full_m, ebm).result, zero, full_n)
        return []
    return private_function(dispatch_name(uks), [mt, mt, mt], [], {DISPATCH_ATTR: ir.StringAttr.get(uks.family)},
                            build)


def emit_all(uks: GpuUKernelSet) -> dict:
    """symbol name -> builder: the kernels' gpu.module and the host dispatch that launches them."""
    return {module_name(uks): lambda: emit_gpu_module(uks), dispatch_name(uks): lambda: emit_dispatch(uks)}
