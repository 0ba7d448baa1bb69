"""Row ops fused into one loop over rows (lowering/loops/row_chains.py) with their rows as vector code
(lowering/loops/row_vectors.py) compute what the separate ops did: softmaxes and a layer norm (the lit
test's functions, test/passes/ftuner-fuse-row-chains.mlir, which checks the fused IR) against
float64 numpy on poisoned outputs, for rows of 1, of fewer than a vector, of exact vectors and of
vectors plus a rest, with -inf and NaN entries, on both sides of the parallel threshold (the fused
loop above it, the original ops below); and the row max of a row tile with NaN."""
from pathlib import Path

import numpy as np
import pytest

import ftuner_mlir

from .helpers import assert_matches, poisoned, random

SOURCE = (Path(__file__).parents[1] / "passes" / "ftuner-fuse-row-chains.mlir").read_text()
ROWS = [1, 2, 15, 16, 17, 64, 65, 119, 131]


@pytest.fixture(scope="module")
def exe():
    return ftuner_mlir.compile(SOURCE)


def softmax64(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("batch, t", [(1, 3), (2, 33), (64, 40)])
@pytest.mark.parametrize("s", ROWS)
def test_softmax(exe, rng, batch, t, s):
    x = 4 * random(rng, (batch, 4, t, s))
    got = exe["softmax"](x, out=poisoned(x.shape))
    assert_matches(got, softmax64(x), np.ones(x.shape))


@pytest.mark.parametrize("n", [1, 7, 300])
@pytest.mark.parametrize("s", ROWS)
def test_softmax_divided_by_its_row_sum(exe, rng, n, s):
    """torch's decomposed softmax: the division by the row sum runs as a multiplication by its reciprocal
    (row_vectors.py), within float tolerance of float64."""
    x = 4 * random(rng, (n, s))
    got = exe["divided_softmax"](x, out=poisoned(x.shape))
    assert_matches(got, softmax64(x), np.ones(x.shape))


def test_softmax_with_masked_entries(exe, rng):
    """-inf entries (a mask) get probability 0; a row whose entries are all NaN but one is NaN."""
    x = random(rng, (6, 4, 41, 37))
    x[:, :, :, 5:30:3] = -np.inf
    got = exe["softmax"](x, out=poisoned(x.shape))
    assert_matches(got, softmax64(x), np.ones(x.shape))
    assert (got[:, :, :, 5:30:3] == 0).all()
    x[0, 1, 2, 7] = np.nan
    got = exe["softmax"](x, out=poisoned(x.shape))
    assert np.isnan(got[0, 1, 2]).all()
    others = np.ones(x.shape[:3], bool)
    others[0, 1, 2] = False
    assert np.isfinite(got[others]).all()


@pytest.mark.parametrize("batch, t, s", [(1, 3, 1), (2, 33, 17), (3, 64, 131), (16, 40, 119)])
def test_masked_softmax_reads_the_mask_per_row(exe, rng, batch, t, s):
    """Scores scaled, masked where a [B, 1, T, S] mask (shared by the heads) drops them, then softmax:
    dropped entries get probability 0, the rest match float64; the dropped entries are a result too."""
    x = 4 * random(rng, (batch, 4, t, s))
    keep = rng.random((batch, 1, t, s)) < 0.7
    keep[..., 0] = True                 # a row of only dropped entries is NaN (as in torch)
    got, dropped = exe["masked_softmax"](x, keep.astype(np.int8), out=(poisoned(x.shape), poisoned(keep.shape)))
    scores = np.where(keep, x.astype(np.float64) * 0.125, -np.inf)
    assert_matches(got, softmax64(scores), np.ones(x.shape))
    assert (got[np.broadcast_to(~keep, x.shape)] == 0).all()
    assert (dropped == ~keep).all()


@pytest.mark.parametrize("n, k", [(1, 1), (3, 5), (300, 17), (77, 768), (1000, 64), (2, 3000), (20, 3000)])
def test_layer_norm_and_its_mean(exe, rng, n, k):
    x, gamma = 3 + random(rng, (n, k)), random(rng, (k,))
    y, mean = exe["layer_norm"](x, gamma, out=(poisoned((n, k)), poisoned((n, 1))))
    x64 = x.astype(np.float64)
    mu = x64.mean(axis=1, keepdims=True)
    ref = (x64 - mu) / np.sqrt(((x64 - mu) ** 2).mean(axis=1, keepdims=True) + 1e-5) * gamma
    assert_matches(mean, mu, np.abs(x64).mean(axis=1, keepdims=True))
    assert_matches(y, ref, np.abs(ref) + 1)


ROW_MAX = """
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
func.func @row_max(%x: tensor<?x?xf32>) -> tensor<?x1xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %e = tensor.empty(%n) : tensor<?x1xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<?x1xf32>) -> tensor<?x1xf32>
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x?xf32>) outs(%f : tensor<?x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.maximumf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<?x1xf32>
  return %r : tensor<?x1xf32>
}
"""


@pytest.mark.parametrize("k", [1, 7, 16, 63, 64, 65, 119, 200])
def test_vector_row_max_is_exact_and_keeps_nan(rng, k):
    """maximumf rows as vector code (4 partial vectors and a masked rest): exactly numpy's max, a NaN
    anywhere in a row makes it NaN, a row of -inf stays -inf."""
    exe = ftuner_mlir.compile(ROW_MAX)
    x = random(rng, (4000, k))            # above the parallel threshold: the vector row tiles
    x[10] = -np.inf
    x[11, k // 2] = np.nan
    got = exe["row_max"](x, out=poisoned((4000, 1)))[:, 0]
    assert np.isnan(got[11])
    keep = np.arange(4000) != 11
    assert np.array_equal(got[keep], x.max(axis=1)[keep])
