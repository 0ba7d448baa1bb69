"""Epilogues of matmuls that run on AMX (matmul_precision="bf16"): the bias, ReLU, residual, scalar and
cube consumers of test/passes/ftuner-lower-cpu-epilogues.mlir run on each row strip of C inside the
AMX code (codegen/amx_epilogue.py; the fused IR is FileChecked by ftuner-lower-cpu-amx-epilogues.mlir).
Against float64 of the bf16-rounded operands, on poisoned outputs, over sizes that leave partial row
strips, partial 16-column steps, one row and one column. Each runs on the host target and on the Zen 4
preset (AVX512-BF16 uKernels, the same epilogues; skipped where the CPU lacks avx512_bf16). Without a
bf16 engine the option changes nothing and the same checks hold against the fp32 operands."""
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import ftuner_mlir
from ftuner_mlir.hardware.cpu import PRESETS, missing_host_features
from ftuner_mlir.hardware.targets import parse_target
from ftuner_mlir.ukernel.bf16_space import engine_in_use

from .helpers import assert_matches, poisoned, random

SOURCE = (Path(__file__).parents[1] / "passes" / "ftuner-lower-cpu-epilogues.mlir").read_text()


@pytest.fixture(scope="module", params=["host", PRESETS["amd-zen4"]], ids=["host", "avx512_bf16"])
def target(request):
    if request.param != "host" and missing_host_features(request.param):
        pytest.skip(f"this CPU lacks {', '.join(missing_host_features(request.param))}: AVX512-BF16 code cannot run here")
    return request.param


@pytest.fixture(scope="module")
def wide(target):
    """What the matmul multiplies: x rounded to bf16 where a bf16 engine runs it, in float64."""
    rounded = engine_in_use(parse_target(target))[0] != "none"
    return lambda x: (x.astype(ml_dtypes.bfloat16) if rounded else x).astype(np.float64)


@pytest.fixture(scope="module")
def exe(target):
    return ftuner_mlir.compile(SOURCE, target, matmul_precision="bf16")


@pytest.mark.parametrize("m, n, k", [(1, 1, 1), (5, 7, 3), (97, 33, 129), (130, 16, 64), (131, 17, 5),
                                     (300, 257, 64), (613, 531, 40)])
def test_bias_relu(exe, rng, m, n, k, wide):
    a, b, bias = random(rng, (m, k)), random(rng, (k, n)), random(rng, (n,))
    out = exe["linear_relu"](a, b, bias, out=poisoned((m, n)))
    ref = np.maximum(wide(a) @ wide(b) + bias, 0.0)
    assert_matches(out, ref, np.abs(wide(a)) @ np.abs(wide(b)) + np.abs(bias))
    assert 0 < np.count_nonzero(out == 0) < out.size or m * n < 8     # ReLU clipped some, kept some


@pytest.mark.parametrize("t", [1, 2, 7, 33, 150])
def test_bias_then_residual(exe, rng, t, wide):
    """Two consumers fused one after the other (the residual collapsed as the rows were expanded)."""
    x, w, bias, res = random(rng, (4, t, 64)), random(rng, (64, 48)), random(rng, (48,)), random(rng, (4, t, 48))
    out = exe["linear_residual"](x, w, bias, res, out=poisoned((4, t, 48)))
    ref = wide(x) @ wide(w) + bias + res
    assert_matches(out, ref, np.abs(wide(x)) @ np.abs(wide(w)) + np.abs(bias) + np.abs(res))


def test_scalar_operand_and_no_operand(exe, rng, wide):
    for m, n, k in [(1, 1, 1), (37, 45, 29), (130, 17, 64), (257, 33, 97)]:
        a, b, scale = random(rng, (m, k)), random(rng, (k, n)), np.float32(rng.uniform(0.5, 2.0))
        product, magnitude = wide(a) @ wide(b), np.abs(wide(a)) @ np.abs(wide(b))
        assert_matches(exe["scaled"](a, b, np.array(scale), out=poisoned((m, n))), product * scale, magnitude * scale)
        assert_matches(exe["cubed"](a, b, out=poisoned((m, n))), product ** 3, magnitude ** 3)


def test_unfused_consumers_still_compute(exe, rng, wide):
    """A result also returned, an f64 operand (no AMX vector form) and x^17 stay apart, and are right."""
    a, b = random(rng, (37, 29)), random(rng, (29, 45))
    mm, sq = exe["two_readers"](a, b, out=(poisoned((37, 45)), poisoned((37, 45))))
    ref, scale = wide(a) @ wide(b), np.abs(wide(a)) @ np.abs(wide(b))
    assert_matches(mm, ref, scale)
    assert_matches(sq, ref * ref, scale * scale)
    a, b, bias = random(rng, (45, 23)), random(rng, (23, 70)), rng.standard_normal(70)
    out = exe["linear_f64_bias"](a, b, bias, out=poisoned((45, 70)))
    assert_matches(out, wide(a) @ wide(b) + bias.astype(np.float32), np.abs(wide(a)) @ np.abs(wide(b)) + np.abs(bias))
    a, b = 0.2 * random(rng, (29, 31)), random(rng, (31, 19))
    out = exe["power_17"](a, b, out=poisoned((29, 19)))
    assert_matches(out, (wide(a) @ wide(b)) ** 17, (np.abs(wide(a)) @ np.abs(wide(b))) ** 17)


def test_fresh_shapes(exe, rng, wide):
    for _ in range(4):
        m, n, k = (int(v) for v in rng.integers(1, 300, size=3))
        a, b, bias = random(rng, (m, k)), random(rng, (k, n)), random(rng, (n,))
        out = exe["linear_relu"](a, b, bias, out=poisoned((m, n)))
        assert_matches(out, np.maximum(wide(a) @ wide(b) + bias, 0.0), np.abs(wide(a)) @ np.abs(wide(b)) + np.abs(bias))


@pytest.mark.parametrize("t", [1, 3, 31, 150])
def test_residual_read_by_two_consumers(exe, rng, t, wide):
    """The residual add joins the AMX dispatch (cheap_producers.py leaves it whole) and feeds a row max
    and a square."""
    x, w, bias, res = random(rng, (4, t, 64)), random(rng, (64, 48)), random(rng, (48,)), random(rng, (4, t, 48))
    mx, sq = exe["residual_two_readers"](x, w, bias, res, out=(poisoned((4, t, 1)), poisoned((4, t, 48))))
    ref = wide(x) @ wide(w) + bias + res
    scale = np.abs(wide(x)) @ np.abs(wide(w)) + np.abs(bias) + np.abs(res)
    assert_matches(mx, ref.max(axis=2, keepdims=True), scale.max(axis=2, keepdims=True))
    assert_matches(sq, ref * ref, scale * scale)


AMX_SOURCE = (Path(__file__).parents[1] / "passes" / "ftuner-lower-cpu-amx-epilogues.mlir").read_text()


@pytest.fixture(scope="module")
def chained(target):
    return ftuner_mlir.compile(AMX_SOURCE, target, matmul_precision="bf16")


@pytest.mark.parametrize("m, k, h, n", [(1, 1, 1, 1), (5, 7, 9, 3), (33, 31, 17, 2), (97, 33, 129, 17),
                                        (300, 64, 257, 48), (64, 768, 3072, 768)])
def test_rounding_for_the_next_matmul_is_an_epilogue(chained, rng, m, k, h, n, wide):
    """relu(x W1 + b1) W2: the first dispatch writes its result in bf16 (the second one's operand), its
    fp32 C tiles in a strip of scratch. Bound: one bf16 rounding step of the hidden activations (a tie
    may round the other way after fp32 accumulation in another order) times |W2|."""
    x, w1, b1, w2 = random(rng, (m, k)), random(rng, (k, h)), random(rng, (h,)), random(rng, (h, n))
    hidden = np.maximum(wide(x) @ wide(w1) + b1, 0.0).astype(np.float32)
    assert np.count_nonzero(hidden == 0) > 0 or m * h < 8          # the ReLU clipped some
    for name in ("ffn", "ffn_two_stages"):      # ReLU and rounding as one epilogue, and as two
        out = chained[name](x, w1, b1, w2, out=poisoned((m, n)))
        assert_matches(out, wide(hidden) @ wide(w2), np.abs(wide(hidden)) @ np.abs(wide(w2)), rtol=2.0 ** -8)


def test_bias_scale_relu_of_the_lit_test(chained, rng, wide):
    for t in (1, 5, 64):
        x, w, bias = random(rng, (4, t, 64)), random(rng, (256, 64)), random(rng, (256,))
        out = chained["ffn_in"](x, w, bias, out=poisoned((4, t, 256)))
        ref = np.maximum((wide(x) @ wide(w).T + bias) * 0.5, 0.0)
        assert_matches(out, ref, np.abs(wide(x)) @ np.abs(wide(w)).T + np.abs(bias))
