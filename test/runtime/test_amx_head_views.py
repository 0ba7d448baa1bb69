"""bf16 attention's batch matmuls read Q, K^T and V in place as (batch, head) slices of the [B, T, H, D]
projections (lowering/dispatch/head_views.py; codegen/bf16_matmul.py: a task takes heads of one batch
entry as one strided 3-D view, K^T through the transposing VNNI pack). Compiled once per engine (the
host's: AMX where `amx_bf16` is listed; the Zen 4 preset's AVX512-BF16), checked against float64 numpy
of the same bf16 inputs at sequence lengths 1, primes and past a 32-wide K step, on head dims that are
and are not a multiple of the 16-column tile, and head counts a task's group does not divide."""
import ml_dtypes
import numpy as np
import pytest

import ftuner_mlir
from ftuner_mlir import compiler

from .helpers import assert_matches, poisoned
from .test_bf16_matmul import AVX512_BF16, _runnable


def attention(heads: int, d: int) -> str:
    """@scores (qkv [B, T, 3 * H * D] bf16) -> Q K^T [B * H, T, T]; @context (P [B * H, T, T] bf16, qkv)
    -> P V [B * H, T, D]: the projections permuted and collapsed as torch-mlir exports them."""
    w = heads * d
    qkv = f"tensor<?x?x{3 * w}xbf16>"
    bthd, bhtd, bhdt = (f"tensor<?x?x{heads}x{d}xbf16>", f"tensor<?x{heads}x?x{d}xbf16>",
                        f"tensor<?x{heads}x{d}x?xbf16>")

    def head(name: str, offset: int, perm: str, out: str) -> str:
        return f"""
  %{name}2 = tensor.extract_slice %qkv[0, 0, {offset}] [%b, %t, {w}] [1, 1, 1] : {qkv} to tensor<?x?x{w}xbf16>
  %{name}4 = tensor.expand_shape %{name}2 [[0], [1], [2, 3]] output_shape [%b, %t, {heads}, {d}] : tensor<?x?x{w}xbf16> into {bthd}
  %{name}e = tensor.empty(%b, %t) : {out}
  %{name}t = linalg.transpose ins(%{name}4 : {bthd}) outs(%{name}e : {out}) permutation = {perm}"""
    dims = f"""
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %qkv, %c0 : {qkv}
  %t = tensor.dim %qkv, %c1 : {qkv}
  %bh = arith.muli %b, %nheads : index"""
    return f"""
func.func @scores(%qkv: {qkv}) -> tensor<?x?x?xf32> {{
  %nheads = arith.constant {heads} : index{dims}{head("q", 0, "[0, 2, 1, 3]", bhtd)}{head("k", w, "[0, 2, 3, 1]", bhdt)}
  %qc = tensor.collapse_shape %qt [[0, 1], [2], [3]] : {bhtd} into tensor<?x?x{d}xbf16>
  %kc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : {bhdt} into tensor<?x{d}x?xbf16>
  %es = tensor.empty(%bh, %t, %t) : tensor<?x?x?xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %s = linalg.batch_matmul ins(%qc, %kc : tensor<?x?x{d}xbf16>, tensor<?x{d}x?xbf16>) outs(%fs : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %s : tensor<?x?x?xf32>
}}

func.func @context(%p: tensor<?x?x?xbf16>, %qkv: {qkv}) -> tensor<?x?x{d}xf32> {{
  %nheads = arith.constant {heads} : index{dims}{head("v", 2 * w, "[0, 2, 1, 3]", bhtd)}
  %vc = tensor.collapse_shape %vt [[0, 1], [2], [3]] : {bhtd} into tensor<?x?x{d}xbf16>
  %eo = tensor.empty(%bh, %t) : tensor<?x?x{d}xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<?x?x{d}xf32>) -> tensor<?x?x{d}xf32>
  %o = linalg.batch_matmul ins(%p, %vc : tensor<?x?x?xbf16>, tensor<?x?x{d}xbf16>) outs(%fo : tensor<?x?x{d}xf32>) -> tensor<?x?x{d}xf32>
  return %o : tensor<?x?x{d}xf32>
}}
"""


def _heads(qkv: np.ndarray, heads: int, d: int) -> np.ndarray:
    """[B, T, 3 * H * D] -> Q, K, V as [3, B * H, T, D] in float64."""
    b, t, _ = qkv.shape
    return qkv.astype(np.float64).reshape(b, t, 3, heads, d).transpose(2, 0, 3, 1, 4).reshape(3, b * heads, t, d)


def bf16(rng, shape) -> np.ndarray:
    return rng.standard_normal(shape).astype(ml_dtypes.bfloat16)


# (heads, D): BERT/GPT-2's 12 x 64; D = 32 (whole tiles); D = 20 (a K tail and an edge panel); D = 136
# (past four 32-wide K steps, an edge panel of 8 columns); 5 heads (a task's group of 4 leaves one)
@pytest.mark.parametrize("heads,d", [(12, 64), (2, 32), (3, 20), (1, 136), (5, 16)])
@pytest.mark.parametrize("target", ["host", AVX512_BF16], ids=["host", "avx512_bf16"])
def test_attention_matmuls_read_bf16_heads_in_place(rng, heads, d, target):
    _runnable(target)
    exe = ftuner_mlir.compile(attention(heads, d), target)
    before = compiler.compilations
    for b, t in [(1, 1), (2, 1), (1, 2), (3, 7), (7, 5), (2, 61), (1, 130)]:
        qkv = bf16(rng, (b, t, 3 * heads * d))
        q, k, v = _heads(qkv, heads, d)
        scores = poisoned((b * heads, t, t))
        exe["scores"](qkv, out=scores)
        assert_matches(scores, q @ k.transpose(0, 2, 1), np.abs(q) @ np.abs(k).transpose(0, 2, 1), rtol=1e-5)
        p = bf16(rng, (b * heads, t, t))
        context = poisoned((b * heads, t, d))
        exe["context"](p, qkv, out=context)
        wide = p.astype(np.float64)
        assert_matches(context, wide @ v, np.abs(wide) @ np.abs(v), rtol=1e-5)
    assert compiler.compilations == before, "a shape triggered a new compilation"

