"""Elementwise ops and row reductions split over the cores above a size (lowering/loops/parallel_generics.py):
the parallel and the serial branch both exact, on sizes either side of the threshold."""
import math

import numpy as np
import pytest

import ftuner_mlir
from ftuner_mlir.lowering.loops.parallel_generics import PARALLEL_MIN_ELEMENTS

from .helpers import poisoned, random

SOURCE = """
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#bias = affine_map<(d0, d1, d2) -> (d2)>
func.func @bias_gelu(%x: tensor<?x?x768xf32>, %b: tensor<768xf32>, %o: tensor<?x?x768xf32>) -> tensor<?x?x768xf32> {
  %r = linalg.generic {indexing_maps = [#map, #bias, #map], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %b : tensor<?x?x768xf32>, tensor<768xf32>) outs(%o : tensor<?x?x768xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    %e = math.erf %s : f32
    linalg.yield %e : f32
  } -> tensor<?x?x768xf32>
  return %r : tensor<?x?x768xf32>
}
func.func @row_sum(%x: tensor<?x?x768xf32>, %o: tensor<?x?x1xf32>) -> tensor<?x?x1xf32> {
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%o : tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %r = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<?x?x768xf32>) outs(%z : tensor<?x?x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<?x?x1xf32>
  return %r : tensor<?x?x1xf32>
}
#ids = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @embedding(%ids: tensor<?x?xi64>, %table: tensor<1000x67xf32>, %o: tensor<?x?x67xf32>) -> tensor<?x?x67xf32> {
  %c0 = arith.constant 0 : index
  %c999 = arith.constant 999 : index
  %c66 = arith.constant 66 : index
  %r = linalg.generic {indexing_maps = [#ids, #map], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids : tensor<?x?xi64>) outs(%o : tensor<?x?x67xf32>) {
  ^bb0(%id: i64, %out: f32):
    %row = arith.index_cast %id : i64 to index
    %k = linalg.index 2 : index
    %r0 = arith.maxsi %row, %c0 : index
    %r1 = arith.minsi %r0, %c999 : index
    %k0 = arith.maxsi %k, %c0 : index
    %k1 = arith.minsi %k0, %c66 : index
    %v = tensor.extract %table[%r1, %k1] : tensor<1000x67xf32>
    linalg.yield %v : f32
  } -> tensor<?x?x67xf32>
  return %r : tensor<?x?x67xf32>
}
"""
ROWS = PARALLEL_MIN_ELEMENTS // 768          # rows x 768 points: the threshold is 42.67 rows
SHAPES = [(1, 1), (3, 7), (ROWS // 6, 6), (ROWS // 6 + 1, 6), (1, ROWS + 1), (16, 43), (7, 131)]


@pytest.fixture(scope="module")
def exe():
    return ftuner_mlir.compile(SOURCE, num_threads=2)


@pytest.mark.parametrize("batch, rows", SHAPES)
def test_bias_gelu_both_branches(exe, rng, batch, rows):
    x, b = random(rng, (batch, rows, 768)), random(rng, (768,))
    out = poisoned((batch, rows, 768))
    exe["bias_gelu"](x, b, poisoned((batch, rows, 768)), out=out)
    want = np.vectorize(math.erf)(x.astype(np.float64) + b)
    assert np.abs(out - want).max() < 1e-6


@pytest.mark.parametrize("batch, rows", [(1, 1), (3, 7), (16, 43), (7, 131), (9, 1000)])
def test_embedding_rows_read_as_vectors(exe, rng, batch, rows):
    """Table rows of 67 (4 vectors and a masked 3) gathered by random ids, on both sides of the
    threshold; an id past the table reads its last row (clamped)."""
    table = random(rng, (1000, 67))
    ids = rng.integers(0, 1000, (batch, rows))
    ids[0, 0] = 5000
    out = poisoned((batch, rows, 67))
    exe["embedding"](ids, table, poisoned((batch, rows, 67)), out=out)
    want = table[np.minimum(ids, 999)]
    assert (out == want).all()


@pytest.mark.parametrize("batch, rows", SHAPES)
def test_row_sum_both_branches(exe, rng, batch, rows):
    x = random(rng, (batch, rows, 768))
    out = poisoned((batch, rows, 1))
    exe["row_sum"](x, poisoned((batch, rows, 1)), out=out)
    want = x.astype(np.float64).sum(axis=2, keepdims=True)
    np.testing.assert_allclose(out, want, rtol=0, atol=1e-4 * np.abs(x).astype(np.float64).sum(axis=2).max())


# x widened to f64, read by a sum and by its square (torch-mlir's layer-norm variance): the cast is recomputed
# in each reduction (lowering/dispatch/cheap_producers.py); sum(x) + sum(x * x) per row, against float64 numpy.
WIDENED_SUMS = """
func.func @ln(%x: tensor<4x?x8xf32>) -> tensor<4x?x1xf64> {
  %c1 = arith.constant 1 : index
  %t = tensor.dim %x, %c1 : tensor<4x?x8xf32>
  %e = tensor.empty(%t) : tensor<4x?x8xf64>
  %w = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<4x?x8xf32>) outs(%e : tensor<4x?x8xf64>) {
  ^bb0(%in: f32, %out: f64):
    %v = arith.extf %in : f32 to f64
    linalg.yield %v : f64
  } -> tensor<4x?x8xf64>
  %z = arith.constant 0.0 : f64
  %e1 = tensor.empty(%t) : tensor<4x?x1xf64>
  %f = linalg.fill ins(%z : f64) outs(%e1 : tensor<4x?x1xf64>) -> tensor<4x?x1xf64>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%w : tensor<4x?x8xf64>) outs(%f : tensor<4x?x1xf64>) {
  ^bb0(%in: f64, %out: f64):
    %v = arith.addf %in, %out : f64
    linalg.yield %v : f64
  } -> tensor<4x?x1xf64>
  %sq = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%w, %w : tensor<4x?x8xf64>, tensor<4x?x8xf64>) outs(%e : tensor<4x?x8xf64>) {
  ^bb0(%a: f64, %b: f64, %out: f64):
    %v = arith.mulf %a, %b : f64
    linalg.yield %v : f64
  } -> tensor<4x?x8xf64>
  %s2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sq : tensor<4x?x8xf64>) outs(%s : tensor<4x?x1xf64>) {
  ^bb0(%in: f64, %out: f64):
    %v = arith.addf %in, %out : f64
    linalg.yield %v : f64
  } -> tensor<4x?x1xf64>
  return %s2 : tensor<4x?x1xf64>
}
"""


@pytest.mark.parametrize("t", [1, 7, 131, 1500])
def test_cast_read_by_two_reductions(rng, t):
    exe = ftuner_mlir.compile(WIDENED_SUMS)
    x = random(rng, (4, t, 8))
    out = np.full((4, t, 1), np.nan)
    exe(x, out=out)
    wide = x.astype(np.float64)
    squares = (wide * wide).sum(-1)
    expected = wide.sum(-1) + squares
    # the two sums can cancel: f64 rounding of the 16 terms, bounded by their magnitudes, not the result's
    bound = 1e-12 * np.abs(expected) + 1e-14 * (np.abs(wide).sum(-1) + squares)
    error = np.abs(out[..., 0] - expected)
    assert (error <= bound).all(), f"max error {error.max()} over the f64 rounding bound"
