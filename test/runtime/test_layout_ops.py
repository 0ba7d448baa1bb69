"""Data movement: strided slices reshaped (a copy that must be a vectorized loop, not memrefCopy) and
transposes as parallel generics, against numpy on both sides of the parallel threshold."""
import numpy as np
import pytest

import ftuner_mlir

from .helpers import poisoned, random

SPLIT = """
func.func @split(%qkv: tensor<4x?x96xf32>) -> (tensor<4x3x?x8xf32>, tensor<4x3x8x?xf32>) {
  %c1 = arith.constant 1 : index
  %t = tensor.dim %qkv, %c1 : tensor<4x?x96xf32>
  %s = tensor.extract_slice %qkv[0, 0, 24] [4, %t, 24] [1, 1, 1] : tensor<4x?x96xf32> to tensor<4x?x24xf32>
  %c4 = arith.constant 4 : i64
  %c3 = arith.constant 3 : i64
  %c8 = arith.constant 8 : i64
  %ti = arith.index_cast %t : index to i64
  %shape = tensor.from_elements %c4, %ti, %c3, %c8 : tensor<4xi64>
  %r = tensor.reshape %s(%shape) : (tensor<4x?x24xf32>, tensor<4xi64>) -> tensor<4x?x3x8xf32>
  %e = tensor.empty(%t) : tensor<4x3x?x8xf32>
  %heads = linalg.transpose ins(%r : tensor<4x?x3x8xf32>) outs(%e : tensor<4x3x?x8xf32>) permutation = [0, 2, 1, 3]
  %e2 = tensor.empty(%t) : tensor<4x3x8x?xf32>
  %keys = linalg.transpose ins(%r : tensor<4x?x3x8xf32>) outs(%e2 : tensor<4x3x8x?xf32>) permutation = [0, 2, 3, 1]
  return %heads, %keys : tensor<4x3x?x8xf32>, tensor<4x3x8x?xf32>
}
"""


@pytest.fixture(scope="module")
def split():
    return ftuner_mlir.compile(SPLIT)


@pytest.mark.parametrize("t", [1, 2, 17, 128, 1031])     # 4*t*3*8 points: parallel from t = 342 on
def test_strided_slice_reshape_and_transposes(split, rng, t):
    qkv = random(rng, (4, t, 96))
    heads, keys = poisoned((4, 3, t, 8)), poisoned((4, 3, 8, t))
    split(qkv, out=(heads, keys))
    r = qkv[:, :, 24:48].reshape(4, t, 3, 8)
    np.testing.assert_array_equal(heads, r.transpose(0, 2, 1, 3))
    np.testing.assert_array_equal(keys, r.transpose(0, 2, 3, 1))


# torch-mlir's dynamic broadcast of dim 1 (a gather with select(X == 1, 0, j)), followed by an add so the
# result is a fresh tensor: a copy when X is the result's size (skipped), a broadcast when X is 1.
BROADCAST = """
func.func @expand_add(%src: tensor<4x?x8xf32>, %other: tensor<4x?x8xf32>) -> tensor<4x?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x = tensor.dim %src, %c1 : tensor<4x?x8xf32>
  %n = tensor.dim %other, %c1 : tensor<4x?x8xf32>
  %e = tensor.empty(%n) : tensor<4x?x8xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]} outs(%e : tensor<4x?x8xf32>) {
  ^bb0(%out: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %one = arith.cmpi eq, %x, %c1 : index
    %j = arith.select %one, %c0, %i1 : index
    %v = tensor.extract %src[%i0, %j, %i2] : tensor<4x?x8xf32>
    linalg.yield %v : f32
  } -> tensor<4x?x8xf32>
  %e2 = tensor.empty(%n) : tensor<4x?x8xf32>
  %r = linalg.add ins(%b, %other : tensor<4x?x8xf32>, tensor<4x?x8xf32>) outs(%e2 : tensor<4x?x8xf32>) -> tensor<4x?x8xf32>
  return %r : tensor<4x?x8xf32>
}
"""


@pytest.mark.parametrize("x, n", [(5, 5), (1, 5), (1, 1), (2000, 2000), (1, 2000), (13, 13)])
def test_dynamic_broadcast_copy_or_broadcast(rng, x, n):
    exe = ftuner_mlir.compile(BROADCAST)
    src, other = random(rng, (4, x, 8)), random(rng, (4, n, 8))
    out = poisoned((4, n, 8))
    exe(src, other, out=out)
    np.testing.assert_array_equal(out, np.broadcast_to(src, (4, n, 8)) + other)


# A batch_matmul result [24, M, N] reshaped to [2, 12, M, N] (attention scores), then exp: the reshape reads the
# dispatch's buffer in place (lowering/buffers/reshape_copies.py).
BMM_RESHAPE = """
func.func @bmm_reshape(%a: tensor<24x?x8xf32>, %b: tensor<24x8x?xf32>) -> tensor<2x12x?x?xf32> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %m = tensor.dim %a, %c1 : tensor<24x?x8xf32>
  %n = tensor.dim %b, %c2 : tensor<24x8x?xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%m, %n) : tensor<24x?x?xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<24x?x?xf32>) -> tensor<24x?x?xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<24x?x8xf32>, tensor<24x8x?xf32>) outs(%f : tensor<24x?x?xf32>) -> tensor<24x?x?xf32>
  %c2i = arith.constant 2 : i64
  %c12 = arith.constant 12 : i64
  %mi = arith.index_cast %m : index to i64
  %ni = arith.index_cast %n : index to i64
  %shape = tensor.from_elements %c2i, %c12, %mi, %ni : tensor<4xi64>
  %s = tensor.reshape %r(%shape) : (tensor<24x?x?xf32>, tensor<4xi64>) -> tensor<2x12x?x?xf32>
  %e2 = tensor.empty(%m, %n) : tensor<2x12x?x?xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<2x12x?x?xf32>) outs(%e2 : tensor<2x12x?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = math.exp %in : f32
    linalg.yield %y : f32
  } -> tensor<2x12x?x?xf32>
  return %x : tensor<2x12x?x?xf32>
}
"""


# The same with an expand_shape between the dispatch and the reshape (the attention context in BERT:
# [B*H, T, 64] expanded to [B, H, T, 64], then reshaped): the reshape reads the buffer behind the view.
BMM_EXPAND_RESHAPE = BMM_RESHAPE.replace("@bmm_reshape", "@bmm_expand_reshape").replace(
    "%s = tensor.reshape %r(%shape)",
    "%x4 = tensor.expand_shape %r [[0, 1], [2], [3]] output_shape [2, 12, %m, %n] : tensor<24x?x?xf32> into "
    "tensor<2x12x?x?xf32>\n  %s = tensor.reshape %x4(%shape)").replace(
    ": (tensor<24x?x?xf32>, tensor<4xi64>) -> tensor<2x12x?x?xf32>",
    ": (tensor<2x12x?x?xf32>, tensor<4xi64>) -> tensor<2x12x?x?xf32>")


@pytest.mark.parametrize("source, m, n", [(BMM_RESHAPE, 1, 1), (BMM_RESHAPE, 5, 7), (BMM_RESHAPE, 31, 64),
                                          (BMM_RESHAPE, 128, 97), (BMM_EXPAND_RESHAPE, 1, 3),
                                          (BMM_EXPAND_RESHAPE, 17, 64)])
def test_reshaped_matmul_result_read_in_place(rng, source, m, n):
    exe = ftuner_mlir.compile(source)
    a, b = random(rng, (24, m, 8)) * 0.3, random(rng, (24, 8, n)) * 0.3
    out = poisoned((2, 12, m, n))
    exe(a, b, out=out)
    want = np.exp(np.matmul(a.astype(np.float64), b.astype(np.float64))).reshape(2, 12, m, n)
    np.testing.assert_allclose(out, want, rtol=2e-6)
