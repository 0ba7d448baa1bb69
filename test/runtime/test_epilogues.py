"""Elementwise consumers fused into the matmul dispatch as epilogues (lowering/dispatch/epilogues.py) compute
what the unfused ops did: against float64 numpy, on poisoned outputs, over sizes that leave partial
blocks, partial vectors (the masked rest of a row) and single rows and columns. The functions are
the lit test's (test/passes/ftuner-lower-cpu-epilogues.mlir), which checks the fused IR."""
from pathlib import Path

import numpy as np
import pytest

import ftuner_mlir

from .helpers import assert_matches, poisoned, random

SOURCE = (Path(__file__).parents[1] / "passes" / "ftuner-lower-cpu-epilogues.mlir").read_text()


@pytest.fixture(scope="module")
def exe():
    return ftuner_mlir.compile(SOURCE)


@pytest.mark.parametrize("m, n, k", [(1, 1, 1), (5, 7, 3), (97, 33, 129), (130, 16, 64), (131, 17, 5),
                                     (300, 257, 64), (600, 531, 40)])
def test_bias_relu_epilogue(exe, rng, m, n, k):
    a, b, bias = random(rng, (m, k)), random(rng, (k, n)), random(rng, (n,))
    out = exe["linear_relu"](a, b, bias, out=poisoned((m, n)))
    ref = np.maximum(a.astype(np.float64) @ b + bias, 0.0)
    assert_matches(out, ref, np.abs(a).astype(np.float64) @ np.abs(b) + np.abs(bias))
    assert 0 < np.count_nonzero(out == 0) < out.size or m * n < 8     # ReLU clipped some, kept some


@pytest.mark.parametrize("t", [1, 2, 7, 33, 150])
def test_bias_and_residual_epilogue_through_the_row_split(exe, rng, t):
    x, w, bias, res = random(rng, (4, t, 64)), random(rng, (64, 48)), random(rng, (48,)), random(rng, (4, t, 48))
    out = exe["linear_residual"](x, w, bias, res, out=poisoned((4, t, 48)))
    ref = x.astype(np.float64) @ w + bias + res
    assert_matches(out, ref, np.abs(x).astype(np.float64) @ np.abs(w) + np.abs(bias) + np.abs(res))


@pytest.mark.parametrize("t", [1, 3, 31, 150])
def test_residual_read_by_two_consumers(exe, rng, t):
    """The residual add fused into the dispatch feeds a row max and a square (not recomputed in each)."""
    x, w, bias, res = random(rng, (4, t, 64)), random(rng, (64, 48)), random(rng, (48,)), random(rng, (4, t, 48))
    mx, sq = exe["residual_two_readers"](x, w, bias, res, out=(poisoned((4, t, 1)), poisoned((4, t, 48))))
    ref = x.astype(np.float64) @ w + bias + res
    scale = np.abs(x).astype(np.float64) @ np.abs(w) + np.abs(bias) + np.abs(res)
    assert_matches(mx, ref.max(axis=2, keepdims=True), scale.max(axis=2, keepdims=True))
    assert_matches(sq, ref * ref, scale * scale)


def test_result_also_returned_keeps_its_consumer_apart(exe, rng):
    a, b = random(rng, (37, 29)), random(rng, (29, 45))
    mm, sq = exe["two_readers"](a, b, out=(poisoned((37, 45)), poisoned((37, 45))))
    ref = a.astype(np.float64) @ b
    scale = np.abs(a).astype(np.float64) @ np.abs(b)
    assert_matches(mm, ref, scale)
    assert_matches(sq, ref * ref, scale * scale)


def test_epilogue_operand_of_another_element_type(exe, rng):
    a, b, bias = random(rng, (45, 23)), random(rng, (23, 70)), rng.standard_normal(70)
    out = exe["linear_f64_bias"](a, b, bias, out=poisoned((45, 70)))
    ref = a.astype(np.float64) @ b + bias.astype(np.float32)
    assert_matches(out, ref, np.abs(a).astype(np.float64) @ np.abs(b) + np.abs(bias))


def test_epilogue_with_a_0d_operand(exe, rng):
    for m, n, k in [(1, 1, 1), (37, 45, 29), (130, 17, 64)]:
        a, b, scale = random(rng, (m, k)), random(rng, (k, n)), np.float32(rng.uniform(0.5, 2.0))
        out = exe["scaled"](a, b, np.array(scale), out=poisoned((m, n)))
        assert_matches(out, (a.astype(np.float64) @ b) * scale, (np.abs(a).astype(np.float64) @ np.abs(b)) * scale)


@pytest.mark.parametrize("m, n, k", [(1, 1, 1), (29, 19, 31), (131, 47, 17)])
def test_cubed_epilogue(exe, rng, m, n, k):
    """x^3 (math.fpowi by 3, as multiplications): fused, and still the cube."""
    a, b = random(rng, (m, k)), random(rng, (k, n))
    out = exe["cubed"](a, b, out=poisoned((m, n)))
    ref = a.astype(np.float64) @ b
    assert_matches(out, ref ** 3, (np.abs(a).astype(np.float64) @ np.abs(b)) ** 3)


def test_refused_body_still_computes(exe, rng):
    """x^17 stays a powi call, its generic apart from the dispatch."""
    a, b = 0.2 * random(rng, (29, 31)), random(rng, (31, 19))
    out = exe["power_17"](a, b, out=poisoned((29, 19)))
    ref = a.astype(np.float64) @ b
    assert_matches(out, ref ** 17, (np.abs(a).astype(np.float64) @ np.abs(b)) ** 17)
