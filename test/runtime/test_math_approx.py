"""f32 exp, erf and tanh compiled as polynomials (lowering/dispatch/math_approx.py), against float64."""
import math

import numpy as np
import pytest

import ftuner_mlir

from .helpers import poisoned

SOURCE = """
#map = affine_map<(d0) -> (d0)>
func.func @main(%x: tensor<?xf32>, %o1: tensor<?xf32>, %o2: tensor<?xf32>, %o3: tensor<?xf32>)
    -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %r:3 = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%o1, %o2, %o3 : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  ^bb0(%in: f32, %a: f32, %b: f32, %c: f32):
    %e = math.exp %in : f32
    %r = math.erf %in : f32
    %t = math.tanh %in : f32
    linalg.yield %e, %r, %t : f32, f32, f32
  } -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>)
  return %r#0, %r#1, %r#2 : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}
"""
SMALLEST_NORMAL = float(np.finfo(np.float32).tiny)
ULP = 2.0 ** -23


@pytest.fixture(scope="module")
def exe():
    return ftuner_mlir.compile(SOURCE)


def _run(exe, x):
    outs = [poisoned(x.shape) for _ in range(3)]
    return exe(x, *outs)


def _grid(rng):
    """Every magnitude from 1e-30 to past the overflow, both signs, plus fresh random points."""
    points = [np.linspace(-110, 110, 200_001), np.geomspace(1e-30, 110, 20_001), -np.geomspace(1e-30, 110, 20_001),
              rng.uniform(-20, 20, 50_001)]
    return np.concatenate(points).astype(np.float32)


def test_exp_within_two_ulps_where_normal(exe, rng):
    x = _grid(rng)
    e = _run(exe, x)[0].astype(np.float64)
    ref = np.exp(x.astype(np.float64))
    normal = (ref >= SMALLEST_NORMAL) & (ref <= np.finfo(np.float32).max)
    assert (np.abs(e[normal] - ref[normal]) / ref[normal]).max() < 2 * ULP
    assert (np.abs(e[ref < SMALLEST_NORMAL] - ref[ref < SMALLEST_NORMAL]) <= SMALLEST_NORMAL).all()
    assert np.isposinf(e[ref > np.finfo(np.float32).max]).all()


def test_erf_and_tanh_within_a_few_ulps_of_one(exe, rng):
    """Measured on 4M points of [-5, 5]: erf 3.74e-7 off at most (near its clamp at 4), tanh 2.83e-7."""
    x = _grid(rng)
    _, r, t = (v.astype(np.float64) for v in _run(exe, x))
    x64 = x.astype(np.float64)
    assert np.abs(r - np.vectorize(math.erf)(x64)).max() < 4 * ULP
    assert np.abs(t - np.tanh(x64)).max() < 3 * ULP
    tiny = np.abs(x64) < 1e-3          # relative accuracy where the values themselves are small
    assert (np.abs(t[tiny] - np.tanh(x64[tiny])) <= 3 * ULP * np.abs(x64[tiny])).all()
    assert (np.abs(r[tiny] - np.vectorize(math.erf)(x64[tiny])) <= 3 * ULP * np.abs(x64[tiny]) + 1e-45).all()


def test_special_values(exe):
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 89.0, -104.0, 1.0], np.float32)
    e, r, t = _run(exe, x)
    np.testing.assert_array_equal(e[[0, 1, 3, 4, 5, 6]], [np.inf, 0.0, 1.0, 1.0, np.inf, 0.0])
    np.testing.assert_array_equal(r[[0, 1, 3]], [1.0, -1.0, 0.0])
    np.testing.assert_array_equal(t[[0, 1, 3]], [1.0, -1.0, 0.0])
    assert np.signbit(r[4]) and np.signbit(t[4])
    assert np.isnan(e[2]) and np.isnan(r[2]) and np.isnan(t[2])
    assert abs(e[7] - math.e) < 2 * ULP * math.e


def test_exp_never_computes_subnormals(exe, rng):
    """Inputs whose exp would be subnormal give 0 (a causal mask's -inf and finfo.min scores): subnormal
    arithmetic costs a microcode assist per element (masked softmax rows ran 3x slower)."""
    x = np.concatenate([np.linspace(-110, -80, 100_001), rng.uniform(-3.4e38, -80, 10_001)]).astype(np.float32)
    e = _run(exe, x)[0]
    assert ((e == 0) | (e >= SMALLEST_NORMAL)).all()
    ref = np.exp(x.astype(np.float64))
    assert (e[ref < SMALLEST_NORMAL] == 0).all()
    normal = ref >= SMALLEST_NORMAL
    assert (np.abs(e[normal] - ref[normal]) / ref[normal]).max() < 2 * ULP


POWERS = (-3, 0, 1, 2, 5, 16)
POWER_SOURCE = """
#map = affine_map<(d0) -> (d0)>
func.func @powers(%x: tensor<?xf64>, %o: tensor<?xf64>) -> tensor<?xf64> {{
  %r = linalg.generic {{indexing_maps = [#map, #map], iterator_types = ["parallel"]}}
      ins(%x : tensor<?xf64>) outs(%o : tensor<?xf64>) {{
  ^bb0(%in: f64, %out: f64):
{body}
    linalg.yield %s{last} : f64
  }} -> tensor<?xf64>
  return %r : tensor<?xf64>
}}
"""


def test_constant_powers_are_multiplications_with_the_right_value(rng):
    """x^-3 + x^0 + x^1 + x^2 + x^5 + x^16 by fpowi (expanded to multiplications), in f64."""
    lines = []
    for i, n in enumerate(POWERS):
        lines.append(f"    %n{i} = arith.constant {n} : i32\n    %p{i} = math.fpowi %in, %n{i} : f64, i32")
        lines.append(f"    %s{i} = arith.addf %p{i}, %s{i - 1} : f64" if i else "    %s0 = arith.addf %p0, %p0 : f64")
    source = POWER_SOURCE.format(body="\n".join(lines), last=len(POWERS) - 1)
    exe = ftuner_mlir.compile(source)
    x = rng.uniform(0.5, 1.5, 1001) * rng.choice([-1.0, 1.0], 1001)
    terms = [x ** -3.0] + [x ** float(n) for n in POWERS]     # the first term is added twice
    got = exe(x, np.full_like(x, np.nan))
    # within rounding of the terms' magnitudes (odd powers of negative x cancel even ones)
    assert (np.abs(got - sum(terms)) <= 1e-13 * sum(np.abs(t) for t in terms)).all()
