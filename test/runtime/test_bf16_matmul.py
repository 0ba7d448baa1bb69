"""bf16 matmuls (bf16 operands, fp32 accumulation and result) against float64 numpy of the same bf16
inputs, on every kind of shape: 1, odd, prime, the AMX tile edges (16 rows, 16 columns, 32 of K) and
their neighbours, and shapes drawn at random now. Each shape test runs twice: on the host target (AMX
uKernels where `amx_bf16` is in /proc/cpuinfo, else the AVX512-BF16 or fp32 fallback) and on the Zen 4
preset, whose bf16 engine is AVX512-BF16 (its uKernels run on any CPU with `avx512_bf16`, Sapphire
Rapids included; the tests say when this one lacks it). The AMX tests that must execute say when they
skip."""
import ml_dtypes
import numpy as np
import pytest

import ftuner_mlir
from ftuner_mlir import compiler, models
from ftuner_mlir.hardware.cpu import PRESETS, detect_host
from ftuner_mlir.ukernel.bf16_space import transposed_pays

from .helpers import assert_matches, poisoned

HAS_AMX = detect_host().bf16_engine == "amx"
needs_amx = pytest.mark.skipif(not HAS_AMX, reason="this CPU has no AMX (amx_bf16): the AMX uKernels cannot run here")

SHAPES = [  # (M, N, K)
    (1, 1, 1), (1, 17, 5), (3, 1, 2), (7, 11, 13), (16, 16, 32), (17, 15, 31), (15, 17, 33), (31, 33, 64),
    (32, 32, 32), (33, 31, 65), (97, 101, 103), (128, 256, 64), (257, 129, 131), (31, 1000, 7), (64, 2304, 768),
    (509, 67, 523), (1031, 33, 300),
]


def bf16(rng, shape):
    return rng.standard_normal(shape).astype(ml_dtypes.bfloat16)


AVX512_BF16 = PRESETS["amd-zen4"]      # its bf16 engine: AVX512-BF16 (vdpbf16ps outruns its fp32 FMAs)
WIDENED = PRESETS["x86-avx512"]        # no bf16 engine: bf16 operands widened to fp32 (Intel without AMX)


def _runnable(target) -> None:
    if target != "host" and _lacks(target):
        pytest.skip(f"this CPU lacks {', '.join(_missing(target))}: {target.name}'s code cannot run here")


@pytest.fixture(scope="module", params=["host", AVX512_BF16], ids=["host", "avx512_bf16"])
def exes(request):
    target = request.param
    _runnable(target)
    return {"matmul": ftuner_mlir.compile(models.matmul("bf16"), target),
            "dense": ftuner_mlir.compile(models.dense(n="?", k="?", dtype="bf16"), target),
            "dense_fixed": ftuner_mlir.compile(models.dense(dtype="bf16"), target),
            "batch": ftuner_mlir.compile(models.batch_matmul("bf16"), target)}


def _check(exe, a, b, b_as_nk: bool):
    m, n = a.shape[0], (b.shape[0] if b_as_nk else b.shape[1])
    out = poisoned((m, n))
    assert exe(a, b, out=out) is out
    wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)
    wide_b = wide_b.T if b_as_nk else wide_b
    assert_matches(out, wide_a @ wide_b, np.abs(wide_a) @ np.abs(wide_b), rtol=1e-5)


def test_matmul_every_shape_one_compilation(exes, rng):
    before = compiler.compilations
    for m, n, k in SHAPES:
        _check(exes["matmul"], bf16(rng, (m, k)), bf16(rng, (k, n)), b_as_nk=False)
    assert compiler.compilations == before, "a shape triggered a new compilation"


def test_dense_every_shape(exes, rng):
    for m, n, k in SHAPES:
        _check(exes["dense"], bf16(rng, (m, k)), bf16(rng, (n, k)), b_as_nk=True)


@pytest.mark.parametrize("m", [1, 5, 16, 17, 24, 25, 64])
def test_dense_few_rows_as_transposed_product(exes, rng, m):
    """A Dense with few rows and its weight given per call runs on AMX as the transposed product
    C^T = W.X^T up to 24 rows here (bf16_space.transposed_pays; 25 and 64 as C = X.W^T): W's 1013 rows
    are the row strips (31 x 32, then 16, 4 and 1 rows), X's rows the columns (an edge panel unless m is
    a multiple of 16), C written transposed; K = 200 ends in a partial step. Against float64; a NaN and
    an infinity in X reach exactly their rows of C."""
    n, k = 1013, 200
    assert transposed_pays(m, n, k) == (m <= 24)
    x, w = bf16(rng, (m, k)), bf16(rng, (n, k))
    _check(exes["dense"], x, w, b_as_nk=True)
    x[m - 1, k - 1], x[0, 0] = np.inf, np.nan
    out = exes["dense"](x, w)
    assert np.isnan(out[0]).all()
    if m > 1:
        assert (np.isinf(out[m - 1]) | np.isnan(out[m - 1])).all() and np.isfinite(out[1:m - 1]).all()


def test_dense_accumulating_into_c_both_products(rng):
    """C += X.W^T into a C that holds values (not a zero init): the transposed product (few rows) reads C
    transposed through the scratch, the plain one in place; odd sizes on both sides of the threshold,
    against float64."""
    t, f = "tensor<?x?xbf16>", "tensor<?x?xf32>"
    exe = ftuner_mlir.compile(f"""
func.func @dense_acc(%x: {t}, %w: {t}, %c: {f}) -> {f} {{
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : {t}, {t}) outs(%c : {f}) -> {f}
  return %r : {f}
}}
""")
    for m, n, k in [(1, 40, 33), (5, 1013, 200), (17, 1013, 200), (64, 300, 77)]:
        x, w = bf16(rng, (m, k)), bf16(rng, (n, k))
        c = rng.standard_normal((m, n)).astype(np.float32)
        out = exe["dense_acc"](x, w, c.copy())
        wide_x, wide_w = x.astype(np.float64), w.astype(np.float64)
        assert_matches(out, c + wide_x @ wide_w.T, np.abs(c) + np.abs(wide_x) @ np.abs(wide_w.T), rtol=1e-5)


@pytest.mark.parametrize("t", [1, 2, 5, 43, 128])
def test_dense_paper_shapes(exes, rng, t):
    """The paper's Dense (X [16T x 768] . W [2304 x 768]^T) with the weight's shape fixed."""
    _check(exes["dense_fixed"], bf16(rng, (16 * t, 768)), bf16(rng, (2304, 768)), b_as_nk=True)


@pytest.mark.parametrize("batch, m, n, k", [(1, 1, 1, 1), (3, 5, 7, 11), (192, 5, 5, 64), (12, 24, 64, 24),
                                            (13, 43, 64, 43), (2, 100, 100, 64), (7, 119, 3, 128), (1, 257, 129, 67),
                                            (37, 7, 33, 48), (17, 16, 16, 32), (24, 9, 520, 1000)])
def test_batch_matmul(exes, rng, batch, m, n, k):
    """Attention's batched products (T x 64 x T and T x T x 64 per head), odd and unit sizes; batches that
    do not split evenly into the tasks' groups of matrices (37 = 9 groups of 4 and one of 1); B blocks too
    big for a group (24 x 9x520x1000: one matrix a task)."""
    a, b = bf16(rng, (batch, m, k)), bf16(rng, (batch, k, n))
    out = poisoned((batch, m, n))
    exes["batch"](a, b, out=out)
    wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)
    assert_matches(out, wide_a @ wide_b, np.abs(wide_a) @ np.abs(wide_b), rtol=1e-5)


def test_batch_matmul_every_row_rest(exes, rng):
    """Every row count a batched product's strips can end with (its rest below 16 is one strip of exactly
    that many rows): 1..33 rows, each checked against float64."""
    for m in range(1, 34):
        a, b = bf16(rng, (3, m, 40)), bf16(rng, (3, 40, 17))
        out = poisoned((3, m, 17))
        exes["batch"](a, b, out=out)
        wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)
        assert_matches(out, wide_a @ wide_b, np.abs(wide_a) @ np.abs(wide_b), rtol=1e-5)


def test_two_d_and_batched_products_in_one_module(rng):
    """A module with a 2-D and a batched AMX product (a transformer layer's linear and attention): their
    row-strip functions have different signatures (a batched one runs over a group of matrices) and
    are separate functions; both exact."""
    exe = ftuner_mlir.compile(models.matmul("bf16") + models.batch_matmul("bf16"))
    _check(exe["matmul"], bf16(rng, (37, 40)), bf16(rng, (40, 29)), b_as_nk=False)
    a, b = bf16(rng, (5, 21, 40)), bf16(rng, (5, 40, 13))
    out = poisoned((5, 21, 13))
    exe["batch_matmul"](a, b, out=out)
    wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)
    assert_matches(out, wide_a @ wide_b, np.abs(wide_a) @ np.abs(wide_b), rtol=1e-5)


def test_fresh_shapes_never_seen(exes, rng):
    for _ in range(6):
        m, n, k = (int(x) for x in rng.integers(1, 400, size=3))
        _check(exes["dense"], bf16(rng, (m, k)), bf16(rng, (n, k)), b_as_nk=True)
        _check(exes["matmul"], bf16(rng, (m, k)), bf16(rng, (k, n)), b_as_nk=False)


def test_specials_propagate(exes, rng):
    """An infinity or NaN in A reaches exactly the rows it is in (the packs' zero padding adds nothing)."""
    a, b = bf16(rng, (37, 45)), bf16(rng, (29, 45))
    a[3, 44] = np.inf
    a[20, 0] = np.nan
    out = exes["dense"](a, b)
    assert np.isnan(out[20]).all() and np.isinf(out[3]).sum() + np.isnan(out[3]).sum() == 29
    rows = [r for r in range(37) if r not in (3, 20)]
    assert np.isfinite(out[rows]).all()


def test_wrong_dtype_is_refused_before_native_code(exes, rng):
    with pytest.raises(ValueError, match="argument #0 must have dtype bfloat16, got float32"):
        exes["dense"](rng.standard_normal((4, 8)).astype(np.float32), bf16(rng, (3, 8)))


def test_zero_k_gives_zeros(exes, rng):
    out = exes["dense"](bf16(rng, (5, 0)), bf16(rng, (7, 0)))
    assert out.shape == (5, 7) and (out == 0).all()


@needs_amx
def test_host_runs_amx_ukernels(rng):
    """On this AMX host the code really is AMX code (the JIT route keeps its LLVM dialect to look at)."""
    exe = ftuner_mlir.compile(models.dense(n="?", k="?", dtype="bf16"), isolate=False, cache=False)
    assert "llvm.x86.tdpbf16ps.internal" in exe.llvm_dialect
    _check(exe, bf16(rng, (37, 45)), bf16(rng, (29, 45)), b_as_nk=True)


def test_without_amx_the_fp32_uKernels_serve(rng):
    """A target without a bf16 engine widens the operands and runs the fp32 uKernels: same results."""
    exe = ftuner_mlir.compile(models.dense(n="?", k="?", dtype="bf16"), PRESETS["x86-avx512"]) \
        if not _lacks(PRESETS["x86-avx512"]) else pytest.skip("this machine cannot run AVX-512 code")
    for m, n, k in [(1, 1, 1), (17, 15, 31), (97, 101, 103)]:
        _check(exe, bf16(rng, (m, k)), bf16(rng, (n, k)), b_as_nk=True)


def _missing(target) -> list[str]:
    from ftuner_mlir.hardware.cpu import missing_host_features
    return missing_host_features(target)


def _lacks(target) -> bool:
    return bool(_missing(target))


def test_zen4_runs_avx512_bf16_ukernels(rng):
    """The Zen 4 preset's bf16 code is vdpbf16ps code (the JIT route keeps its LLVM dialect), no AMX."""
    _runnable(AVX512_BF16)
    exe = ftuner_mlir.compile(models.dense(n="?", k="?", dtype="bf16"), AVX512_BF16, isolate=False, cache=False)
    assert "llvm.x86.avx512bf16.dpbf16ps.512" in exe.llvm_dialect and "tdpbf16ps" not in exe.llvm_dialect
    _check(exe, bf16(rng, (37, 45)), bf16(rng, (29, 45)), b_as_nk=True)


def test_slow_dot_products_widen_to_fp32(rng):
    """Where vdpbf16ps does fewer flops than the fp32 FMAs (Sapphire Rapids: half), a target whose bf16
    engine is AVX512-BF16 widens to the fp32 uKernels instead: same results, no dot products."""
    import dataclasses
    slow = dataclasses.replace(AVX512_BF16, name="slow-dots", bf16_dot_flops=AVX512_BF16.fp32_flops // 2)
    _runnable(slow)
    exe = ftuner_mlir.compile(models.dense(n="?", k="?", dtype="bf16"), slow, isolate=False, cache=False)
    assert "dpbf16ps" not in exe.llvm_dialect
    _check(exe, bf16(rng, (17, 45)), bf16(rng, (29, 45)), b_as_nk=True)


@pytest.mark.parametrize("target", ["host", AVX512_BF16], ids=["host", "avx512_bf16"])
def test_fp32_model_with_bf16_matmuls(rng, target):
    """matmul_precision="bf16" on an fp32 Dense with a constant weight: the weight rounded to bf16 once,
    the activation on every call, fp32 accumulation. Exact against float64 of the rounded operands
    (where a bf16 engine runs it); without one the option changes nothing (exact against fp32 operands)."""
    from ftuner_mlir.freeze import freeze_arguments
    from ftuner_mlir.hardware.targets import parse_target
    from ftuner_mlir.ukernel.bf16_space import engine_in_use
    _runnable(target)
    w = rng.standard_normal((300, 77)).astype(np.float32)
    exe = ftuner_mlir.compile(freeze_arguments(models.dense(n=300, k=77), {1: w}), target, matmul_precision="bf16")
    rounded = engine_in_use(parse_target(target))[0] != "none"
    for m in (1, 13, 64, 97):
        x = rng.standard_normal((m, 77)).astype(np.float32)
        x[0, 0] = np.nan if m == 97 else x[0, 0]
        out = exe(x)
        if rounded:
            wide_x, wide_w = (v.astype(ml_dtypes.bfloat16).astype(np.float64) for v in (x, w))
        else:
            wide_x, wide_w = x.astype(np.float64), w.astype(np.float64)
        if m == 97:
            assert np.isnan(out[0]).all() and np.isfinite(out[1:]).all()
            out, wide_x = out[1:], wide_x[1:]
        assert_matches(out, wide_x @ wide_w.T, np.abs(wide_x) @ np.abs(wide_w).T, rtol=1e-5)


def test_matmul_precision_is_checked():
    from ftuner_mlir.errors import InvalidOptions
    with pytest.raises(InvalidOptions, match="matmul-precision must be one of f32, bf16, got 'fp8'"):
        ftuner_mlir.compile(models.dense(), matmul_precision="fp8")


@pytest.mark.parametrize("target", ["host", AVX512_BF16], ids=["host", "avx512_bf16"])
def test_one_thread(rng, target):
    """Sequential code (the forall as a loop) takes the same bf16 path."""
    _runnable(target)
    exe = ftuner_mlir.compile(models.dense(n="?", k="?", dtype="bf16"), target, num_threads=1)
    for m, n, k in [(1, 1, 1), (33, 31, 65), (257, 129, 131)]:
        _check(exe, bf16(rng, (m, k)), bf16(rng, (n, k)), b_as_nk=True)


@pytest.mark.parametrize("target", ["host", AVX512_BF16, WIDENED], ids=["host", "avx512_bf16", "widened"])
@pytest.mark.parametrize("n, k, transposed", [(300, 77, True), (2304, 768, True), (17, 33, False), (64, 1, False)])
def test_constant_weight_packed_at_compile_time(rng, n, k, transposed, target):
    """A frozen bf16 weight becomes VNNI panels in the module (no pack per call): columns past N and K
    past the last full step are the panels' zeros; exact against float64 at unseen row counts. Without
    a bf16 engine it becomes fp32 panels, widened at compile time (lit: ftuner-select-ukernels.mlir)."""
    from ftuner_mlir.freeze import freeze_arguments
    w = bf16(rng, (n, k) if transposed else (k, n))
    source = models.dense(n=n, k=k, dtype="bf16") if transposed else models.matmul("bf16", n=n, k=k)
    _runnable(target)
    exe = ftuner_mlir.compile(freeze_arguments(source, {1: w}), target)
    for m in (1, 15, 97):
        x = bf16(rng, (m, k))
        out = exe(x)
        wide_x, wide_w = x.astype(np.float64), w.astype(np.float64)
        wide_w = wide_w.T if transposed else wide_w
        assert_matches(out, wide_x @ wide_w, np.abs(wide_x) @ np.abs(wide_w), rtol=1e-5)
