"""The machine's limits, measured once by small MLIR kernels compiled through the same pipeline:
fp32 FMA throughput (register-resident FMA chains on every core), memory bandwidth (a streaming
scale over a buffer much larger than the caches, read + write bytes counted) and the bf16 engine's
throughput on one core (tile-resident tdpbf16ps chains on AMX, register-resident vdpbf16ps chains on
AVX512-BF16)."""
from __future__ import annotations

import dataclasses
import time

import numpy as np

MAX_CHAINS = 16   # independent accumulators per core: more than FMA latency x FMA ports on current x86


def chains(target) -> int:
    """Accumulators the peak kernel keeps: MAX_CHAINS, fewer where they and the kernel's two constant
    vectors would not fit the registers (AVX2's 16: 18 live vectors spilled and read a third low)."""
    return min(MAX_CHAINS, target.vector_registers - 2)


DOT_OPERAND = 2.0 ** -8   # each bf16 of the dot kernel's pairs: a step adds 2 * 2^-16 to every lane


def fma_kernel(lanes: int, count: int = MAX_CHAINS, dot: bool = False) -> str:
    """`count` independent FMA chains of `lanes`-wide vectors per row of x, summed at the end; with
    `dot`, AVX512-BF16 dot products (16 lanes, each adding two bf16 products) instead of FMAs."""
    v = f"vector<{lanes}xf32>"
    accs = ", ".join(f"%a{i} = %v" for i in range(count))
    types = ", ".join([v] * count)
    step = (lambda i: f"%n{i} = x86vector.avx512.dot %a{i}, %pair, %pair : vector<{2 * lanes}xbf16> -> {v}") if dot \
        else (lambda i: f"%n{i} = vector.fma %a{i}, %scale, %shift : {v}")
    steps = "\n        ".join(step(i) for i in range(count))
    sums = "\n      ".join(f"%s{i} = arith.addf %s{i - 1}, %r#{i + 1} : {v}" for i in range(1, count - 1))
    return f"""
func.func @fma_peak(%x: tensor<?x{lanes}xf32>, %steps: tensor<?xf32>) -> tensor<?x{lanes}xf32>
    attributes {{ftuner.unchecked_regions}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = tensor.dim %x, %c0 : tensor<?x{lanes}xf32>
  %n = tensor.dim %steps, %c0 : tensor<?xf32>
  %init = tensor.empty(%rows) : tensor<?x{lanes}xf32>
  %pad = arith.constant 0.0 : f32
  %scale = arith.constant dense<0.999999> : {v}
  %shift = arith.constant dense<0.000001> : {v}
  %pair = arith.constant dense<{DOT_OPERAND}> : vector<{2 * lanes}xbf16>
  %out = scf.forall (%i) in (%rows) shared_outs(%o = %init) -> (tensor<?x{lanes}xf32>) {{
    %v = vector.transfer_read %x[%i, %c0], %pad {{in_bounds = [true]}} : tensor<?x{lanes}xf32>, {v}
    %r:{count} = scf.for %s = %c0 to %n step %c1 iter_args({accs}) -> ({types}) {{
        {steps}
        scf.yield {", ".join(f"%n{i}" for i in range(count))} : {types}
    }}
      %s0 = arith.addf %r#0, %r#1 : {v}
      {sums}
    %row = tensor.extract_slice %o[%i, 0] [1, {lanes}] [1, 1] : tensor<?x{lanes}xf32> to tensor<{lanes}xf32>
    %w = vector.transfer_write %s{count - 2}, %row[%c0] {{in_bounds = [true]}} : {v}, tensor<{lanes}xf32>
    scf.forall.in_parallel {{
      tensor.parallel_insert_slice %w into %o[%i, 0] [1, {lanes}] [1, 1] : tensor<{lanes}xf32> into tensor<?x{lanes}xf32>
    }}
  }}
  return %out : tensor<?x{lanes}xf32>
}}
"""


def stream_kernel(lanes: int) -> str:
    v = f"vector<{lanes}xf32>"
    return f"""
func.func @stream(%a: tensor<?x?xf32>) -> tensor<?x?xf32> attributes {{ftuner.unchecked_regions}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cl = arith.constant {lanes} : index
  %rows = tensor.dim %a, %c0 : tensor<?x?xf32>
  %cols = tensor.dim %a, %c1 : tensor<?x?xf32>
  %init = tensor.empty(%rows, %cols) : tensor<?x?xf32>
  %pad = arith.constant 0.0 : f32
  %two = arith.constant dense<2.0> : {v}
  %out = scf.forall (%i) in (%rows) shared_outs(%o = %init) -> (tensor<?x?xf32>) {{
    %row = tensor.extract_slice %o[%i, 0] [1, %cols] [1, 1] : tensor<?x?xf32> to tensor<?xf32>
    %w = scf.for %j = %c0 to %cols step %cl iter_args(%t = %row) -> (tensor<?xf32>) {{
      %x = vector.transfer_read %a[%i, %j], %pad {{in_bounds = [true]}} : tensor<?x?xf32>, {v}
      %y = arith.mulf %x, %two : {v}
      %t2 = vector.transfer_write %y, %t[%j] {{in_bounds = [true]}} : {v}, tensor<?xf32>
      scf.yield %t2 : tensor<?xf32>
    }}
    scf.forall.in_parallel {{
      tensor.parallel_insert_slice %w into %o[%i, 0] [1, %cols] [1, 1] : tensor<?xf32> into tensor<?x?xf32>
    }}
  }}
  return %out : tensor<?x?xf32>
}}
"""


AMX_CHAINS = 4    # independent C tiles: tdpbf16ps's latency over its issue interval, rounded up


def amx_kernel() -> str:
    """AMX_CHAINS tdpbf16ps chains (16x16 fp32 C tiles, 16x32 bf16 A and B) for as many steps as `steps`
    has elements; the C tiles written one above the other."""
    t_ab, t_c = "!amx.tile<16x32xbf16>", "!amx.tile<16x16xf32>"
    accs = ", ".join(f"%a{i} = %z" for i in range(AMX_CHAINS))
    types = ", ".join([t_c] * AMX_CHAINS)
    steps = "\n      ".join(f"%n{i} = amx.tile_mulf %ta, %tb, %a{i} : {t_ab}, {t_ab}, {t_c}" for i in range(AMX_CHAINS))
    stores = "\n  ".join(f"%r{i} = arith.constant {16 * i} : index\n  amx.tile_store %out[%r{i}, %c0], %r#{i} : "
                         f"memref<{16 * AMX_CHAINS}x16xf32>, {t_c}" for i in range(AMX_CHAINS))
    return f"""
func.func @amx_peak(%ab: tensor<16x32xbf16>, %steps: tensor<?xf32>) -> tensor<{16 * AMX_CHAINS}x16xf32>
    attributes {{ftuner.unchecked_regions}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %steps, %c0 : tensor<?xf32>
  %m = bufferization.to_buffer %ab read_only : tensor<16x32xbf16> to memref<16x32xbf16>
  %ta = amx.tile_load %m[%c0, %c0] : memref<16x32xbf16> into {t_ab}
  %tb = amx.tile_load %m[%c0, %c0] : memref<16x32xbf16> into {t_ab}
  %z = amx.tile_zero : {t_c}
  %r:{AMX_CHAINS} = scf.for %s = %c0 to %n step %c1 iter_args({accs}) -> ({types}) {{
      {steps}
      scf.yield {", ".join(f"%n{i}" for i in range(AMX_CHAINS))} : {types}
  }}
  %out = memref.alloc() : memref<{16 * AMX_CHAINS}x16xf32>
  {stores}
  %t = bufferization.to_tensor %out restrict : memref<{16 * AMX_CHAINS}x16xf32> to tensor<{16 * AMX_CHAINS}x16xf32>
  return %t : tensor<{16 * AMX_CHAINS}x16xf32>
}}
"""


def amx_peak(target, repeats: int = 15) -> float:
    """bf16 GFLOP/s of one core's AMX (16 x 16 x 32 multiply-adds per tdpbf16ps), compiled sequential."""
    import ml_dtypes

    import ftuner_mlir

    kernel = ftuner_mlir.compile(amx_kernel(), target, num_threads=1)
    ab = np.full((16, 32), 0.5, ml_dtypes.bfloat16)
    steps = np.empty(200_000, np.float32)
    out = kernel(ab, steps)
    assert np.allclose(out, steps.size * 32 * 0.25), "the AMX peak kernel computed a wrong result"
    t = _best_of(lambda: kernel(ab, steps, out=out), repeats)
    return 2.0 * 16 * 16 * 32 * AMX_CHAINS * steps.size / t / 1e9


def bf16_peak(target, repeats: int = 15) -> tuple[str, float]:
    """(engine, GFLOP/s) of one core's bf16 matmul engine: AMX, AVX512-BF16, or the fp32 FMAs bf16 is
    widened for (bf16.engine_in_use)."""
    from ..ukernel.bf16_space import engine_in_use

    engine = engine_in_use(target)[0]
    if engine == "amx":
        return "AMX bf16", amx_peak(target, repeats)
    if engine == "avx512_bf16":
        return "AVX512-BF16", fma_peak(target, 1, repeats, dot=True)
    return "FMA (bf16 widened)", fma_peak(target, 1, repeats)


@dataclasses.dataclass
class MachineLimits:
    fma_gflops: float        # fp32, all cores
    bandwidth_gbs: float     # read + write bytes per second, all cores
    bf16_gflops: float = 0.0  # bf16 on its engine: one core's measured peak x the cores (0: not measured)
    bf16_engine: str = ""     # what bf16_gflops measured (bf16_peak)

    def peak(self, dtype: str) -> float:
        """The compute peak of `dtype` operands (bf16: its engine's when measured)."""
        return self.bf16_gflops if dtype == "bf16" and self.bf16_gflops else self.fma_gflops

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def _best_of(fn, repeats: int) -> float:
    fn()
    return min(_timed(fn) for _ in range(repeats))


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def fma_peak(target, cores: int, repeats: int = 15, dot: bool = False) -> float:
    """fp32 GFLOP/s of register-resident FMA chains on `cores` cores (one task each): with one core, the
    code is compiled sequential (num_threads=1), as the single-threaded kernels are. With `dot`, bf16
    GFLOP/s of AVX512-BF16 dot-product chains instead (a vdpbf16ps: two products a lane), checked
    against their exact sum."""
    import ftuner_mlir

    lanes = target.lanes(32)
    count = chains(target)
    kernel = ftuner_mlir.compile(fma_kernel(lanes, count, dot), target, num_threads=1 if cores == 1 else 0)
    x = np.zeros((cores, lanes), np.float32) if dot else np.random.default_rng(0).random((cores, lanes), dtype=np.float32)
    steps = np.empty(2_000_000, np.float32)
    if dot:
        assert np.allclose(kernel(x, steps), count * steps.size * 2 * DOT_OPERAND ** 2), \
            "the dot peak kernel computed a wrong result"
    t = _best_of(lambda: kernel(x, steps), repeats)
    return 2.0 * (2 if dot else 1) * cores * steps.size * count * lanes / t / 1e9


def measure(target, repeats: int = 15, bf16: bool = False) -> MachineLimits:
    """The fp32 and bandwidth limits; with `bf16`, the bf16 engine's peak too."""
    import ftuner_mlir

    lanes = target.lanes(32)
    gflops = fma_peak(target, target.cores, repeats)
    stream = ftuner_mlir.compile(stream_kernel(lanes), target)
    a = np.random.default_rng(1).random((64, 1 << 20), dtype=np.float32)     # 256 MiB, beyond any cache
    out = np.empty_like(a)
    tb = _best_of(lambda: stream(a, out=out), repeats)
    assert np.array_equal(out[:, :8], 2 * a[:, :8]), "bandwidth kernel computed a wrong result"
    engine, core_bf16 = bf16_peak(target, repeats) if bf16 else ("", 0.0)
    return MachineLimits(gflops, 2.0 * a.nbytes / tb / 1e9, core_bf16 * target.cores, engine)
