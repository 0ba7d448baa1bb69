"""Compile each matmul-family module once, then run it on many shapes (1, primes, 16*T, large, and
shapes that played no part in uKernel selection); compare with float64 numpy on random inputs."""
import threading

import numpy as np
import pytest

import ftuner_mlir
from ftuner_mlir import compiler, models

from .helpers import assert_matches, compile_here, poisoned, random

MATMUL_SHAPES = [  # (M, N, K)
    (1, 1, 1), (1, 17, 5), (3, 1, 2), (2, 3, 5), (7, 11, 13), (16, 16, 16), (17, 31, 29), (15, 33, 1),
    (97, 101, 103), (128, 256, 64), (257, 129, 131), (31, 1000, 7), (509, 521, 523), (1031, 67, 300),
]
DENSE_T = [1, 2, 3, 5, 7, 13, 16, 43, 64, 101, 128]
BATCH_SHAPES = [  # (batch, M, N, K)
    (1, 1, 1, 1), (3, 5, 7, 11), (192, 5, 5, 64), (192, 24, 64, 24), (13, 43, 64, 43), (2, 100, 100, 64),
    (7, 119, 3, 128), (1, 257, 129, 67),
]


@pytest.fixture(scope="module")
def exes():
    return {
        "matmul": ftuner_mlir.compile(models.matmul()),
        "dense": ftuner_mlir.compile(models.dense()),
        "dense_dynamic": ftuner_mlir.compile(models.dense(n="?", k="?")),
        "batch": ftuner_mlir.compile(models.batch_matmul()),
        "bias_relu": ftuner_mlir.compile(models.matmul_bias_relu()),
        "matmul_f64": ftuner_mlir.compile(models.matmul("f64")),
    }


def _matmul_case(rng, exe, m, n, k, dtype=np.float32):
    a, b = random(rng, (m, k), dtype), random(rng, (k, n), dtype)
    out = poisoned((m, n), dtype)
    result = exe(a, b, out=out)
    assert result is out
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert_matches(result, ref, np.abs(a).astype(np.float64) @ np.abs(b), rtol=1e-4 if dtype == np.float32 else 1e-10)


def test_matmul_every_shape_one_compilation(exes, rng):
    before = compiler.compilations
    for m, n, k in MATMUL_SHAPES:
        _matmul_case(rng, exes["matmul"], m, n, k)
    assert compiler.compilations == before, "a shape triggered a new compilation"


def test_matmul_fresh_shapes_never_seen(exes, rng):
    """Shapes drawn at random now, unknown when the module was compiled or the uKernels selected."""
    for _ in range(6):
        m, n, k = (int(x) for x in rng.integers(1, 300, size=3))
        _matmul_case(rng, exes["matmul"], m, n, k)


@pytest.mark.parametrize("m, n, k", [(256, 37, 19), (257, 1, 5), (300, 530, 300), (512, 33, 129), (255, 65, 31),
                                     (64, 1024, 33), (101, 1031, 301), (63, 2049, 7), (71, 3136, 64), (151, 829, 97), (64, 767, 5)])
def test_matmul_packed_b_blocks(exes, rng, m, n, k):
    """Blocks of 256 rows and more copy B into micro-panels (both edges: N % 32 and K past kc), and so do
    blocks of 64 rows and more when N >= 768; other blocks read it in place."""
    _matmul_case(rng, exes["matmul"], m, n, k)


def test_matmul_f64(exes, rng):
    for m, n, k in [(1, 1, 1), (9, 7, 5), (33, 65, 17), (131, 67, 257)]:
        _matmul_case(rng, exes["matmul_f64"], m, n, k, np.float64)


@pytest.mark.parametrize("t", DENSE_T)
def test_dense_transposed_weight(exes, rng, t):
    m, n, k = 16 * t, 2304, 768
    x, w = random(rng, (m, k)), random(rng, (n, k))
    out = poisoned((m, n))
    exes["dense"](x, w, out=out)
    ref = x.astype(np.float64) @ w.astype(np.float64).T
    assert_matches(out, ref, np.abs(x).astype(np.float64) @ np.abs(w).T)


@pytest.mark.parametrize("m, n, k", [(1, 1, 1), (5, 37, 19), (33, 17, 45), (16, 100, 130), (3, 16, 16),
                                     (40, 530, 300), (17, 15, 33)])
def test_transposed_weight_odd_sizes(exes, rng, m, n, k):
    """B^T packing: full lanes x lanes tiles plus both edges (N and K not multiples of the tile)."""
    x, w = random(rng, (m, k)), random(rng, (n, k))
    out = poisoned((m, n))
    exes["dense_dynamic"](x, w, out=out)
    assert_matches(out, x.astype(np.float64) @ w.astype(np.float64).T, np.abs(x).astype(np.float64) @ np.abs(w).T)


@pytest.mark.parametrize("target, dtype", [("x86-avx2", np.float32), ("host", np.float64)])
def test_transposed_weight_other_vector_widths(rng, target, dtype):
    """8-lane packing transposes: AVX2 fp32 and AVX-512 fp64 (other shuffle lowerings than 16x16 fp32)."""
    exe = ftuner_mlir.compile(models.dense(n="?", k="?", dtype="f64" if dtype == np.float64 else "f32"), target)
    for m, n, k in [(7, 19, 33), (16, 64, 40), (1, 9, 8)]:
        x, w = random(rng, (m, k), dtype), random(rng, (n, k), dtype)
        out = poisoned((m, n), dtype)
        exe(x, w, out=out)
        assert_matches(out, x.astype(np.float64) @ w.astype(np.float64).T,
                       np.abs(x).astype(np.float64) @ np.abs(w).T, rtol=1e-4 if dtype == np.float32 else 1e-10)


def test_dense_odd_rows(exes, rng):
    for m in (1, 3, 17, 250):
        x, w = random(rng, (m, 768)), random(rng, (2304, 768))
        y = exes["dense"](x, w)
        assert y.shape == (m, 2304)
        assert_matches(y, x.astype(np.float64) @ w.astype(np.float64).T, np.abs(x).astype(np.float64) @ np.abs(w).T)


@pytest.mark.parametrize("shape", BATCH_SHAPES)
def test_batch_matmul(exes, rng, shape):
    batch, m, n, k = shape
    a, b = random(rng, (batch, m, k)), random(rng, (batch, k, n))
    out = poisoned((batch, m, n))
    exes["batch"](a, b, out=out)
    assert_matches(out, a.astype(np.float64) @ b.astype(np.float64), np.abs(a).astype(np.float64) @ np.abs(b))


@pytest.mark.parametrize("target", ["host", "amd-zen4"])
def test_masked_tails_with_split_reductions(rng, target):
    """Masked column tails of every row count (1..7 past the 8-row body), with reductions split over
    several accumulator sets (8 FMAs in flight on Intel, 4 on Zen 4): lengths below, at and past a
    multiple of the sets, and past one reduction block (kc), where the tail adds onto C; tails of one
    masked vector (N % 32 <= 16) and of one full and one masked vector (16 < N % 32 < 32)."""
    exe = compile_here(models.matmul(), target)
    widths = (5, 16, 17, 27, 31, 32 + 16, 32 + 29)
    for m in range(1, 16):
        for i, k in enumerate((1, 2, 3, 7, 8, 9, 33, 301)):
            _matmul_case(rng, exe, m, widths[(m + i) % len(widths)], k)


def test_matmul_then_bias_relu(exes, rng):
    clipped = kept = 0
    for m, n, k in [(1, 1, 1), (5, 7, 3), (16, 2304, 768), (97, 33, 129)]:
        a, b, bias = random(rng, (m, k)), random(rng, (k, n)), random(rng, (n,))
        out = poisoned((m, n))
        exes["bias_relu"](a, b, bias, out=out)
        ref = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0.0)
        assert (out[ref == 0] == 0).all()
        assert_matches(out, ref, np.abs(a).astype(np.float64) @ np.abs(b) + np.abs(bias))
        clipped, kept = clipped + np.count_nonzero(ref == 0), kept + np.count_nonzero(ref > 0)
    assert clipped and kept, "the ReLU should both clip and pass values on random data"


def test_zero_sized_rows(exes, rng):
    y = exes["matmul"](random(rng, (0, 5)), random(rng, (5, 3)))
    assert y.shape == (0, 3)


def test_results_are_fresh_arrays(exes, rng):
    a, b = random(rng, (4, 4)), random(rng, (4, 4))
    y1, y2 = exes["matmul"](a, b), exes["matmul"](a, b)
    assert y1 is not y2 and np.array_equal(y1, y2)


def test_concurrent_calls_from_threads(exes):
    """Several Python threads call the same function on different shapes at once."""
    errors = []

    def work(seed):
        try:
            local = np.random.default_rng(seed)
            for _ in range(5):
                m, n, k = (int(x) for x in local.integers(1, 200, size=3))
                _matmul_case(local, exes["matmul"], m, n, k)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_compile_cache_reuses_result():
    before = compiler.compilations
    a = ftuner_mlir.compile(models.matmul())
    b = ftuner_mlir.compile(models.matmul())
    assert a is b
    assert compiler.compilations <= before + 1


def test_single_thread_build_matches(rng):
    exe = ftuner_mlir.compile(models.matmul(), num_threads=1)
    _matmul_case(rng, exe, 67, 45, 23)


def test_report_describes_cover(exes):
    text = exes["dense"].report((16 * 7, 768), (2304, 768))
    assert "matmul_transpose_b" in text and "M=112 N=2304 K=768" in text
    assert "padded work: 0.00%" in text
    text = exes["matmul"].report((37, 65), (65, 129))
    assert "M=37 N=129 K=65" in text


@pytest.mark.parametrize("m, n, k", [(5, 7, 0), (1, 1, 0), (0, 4, 3), (33, 65, 0)])
def test_empty_reduction_gives_zeros(exes, m, n, k):
    """The models' init is a zero fill, which the overwriting dispatch replaces: with K = 0 it must still
    write zeros over the poisoned output (and with M = 0 write nothing)."""
    out = poisoned((m, n))
    result = exes["matmul"](np.ones((m, k), np.float32), np.ones((k, n), np.float32), out=out)
    assert (result == 0).all()
    out = poisoned((2, m, n))
    result = exes["batch"](np.ones((2, m, k), np.float32), np.ones((2, k, n), np.float32), out=out)
    assert (result == 0).all()


def test_reduction_longer_than_one_block(exes, rng):
    """K spanning several kc blocks: the first block overwrites C, the later ones accumulate."""
    uks = exes["matmul"].functions["matmul"].tiled_ops[0][0]
    for k in (uks.kc - 1, uks.kc, uks.kc + 1, 3 * uks.kc + 5):
        _matmul_case(rng, exes["matmul"], 19, 45, k)
