"""Elementwise ops and row reductions split over the cores above a size (lowering/parallel_generics.py):
the parallel and the serial branch both exact, on sizes either side of the threshold."""
import math

import numpy as np
import pytest

import ftuner_mlir
from ftuner_mlir.lowering.parallel_generics import PARALLEL_MIN_ELEMENTS

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


@pytest.mark.parametrize("batch, rows", SHAPES)
def test_row_sum_both_branches(exe, rng, batch, rows):
    x = random(rng, (batch, rows, 768))
    out = poisoned((batch, rows, 1))
    exe["row_sum"](x, poisoned((batch, rows, 1)), out=out)
    want = x.astype(np.float64).sum(axis=2, keepdims=True)
    np.testing.assert_allclose(out, want, rtol=0, atol=1e-4 * np.abs(x).astype(np.float64).sum(axis=2).max())
