"""Attention's batch matmuls read Q, K^T and V as (batch, head) slices of the [B, T, H, D] projections
(lowering/dispatch/head_views.py, codegen/matmul.HeadViews): compiled once, compared with float64 numpy at
sequence lengths 1, primes and past one reduction block, on head dims that are and are not a multiple of
the vector width, with and without torch-mlir's broadcast gather between transpose and matmul."""
import ml_dtypes
import numpy as np
import pytest

import ftuner_mlir
from ftuner_mlir.hardware.cpu import detect_host
from ftuner_mlir.ukernel.bf16_space import engine_in_use

from .helpers import assert_matches, poisoned, random


def _gather(name: str, src: str, shape: str, axis: int, length: str = "%t") -> str:
    """torch-mlir's dynamic broadcast of `src` along `axis` to `length` (a copy unless that dim is 1)."""
    idx = ", ".join(f"%{name}_i{d}" if d != axis else f"%{name}_s" for d in range(4))
    return f"""
  %{name}_x = tensor.dim %{src}, %c{axis} : {shape}
  %{name}_e = tensor.empty(%b, {length}) : {shape}
  %{name} = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} outs(%{name}_e : {shape}) {{
  ^bb0(%out: f32):
    %{name}_i0 = linalg.index 0 : index
    %{name}_i1 = linalg.index 1 : index
    %{name}_i2 = linalg.index 2 : index
    %{name}_i3 = linalg.index 3 : index
    %{name}_one = arith.cmpi eq, %{name}_x, %c1 : index
    %{name}_s = arith.select %{name}_one, %c0, %{name}_i{axis} : index
    %{name}_v = tensor.extract %{src}[{idx}] : {shape}
    linalg.yield %{name}_v : f32
  }} -> {shape}"""


def attention(heads: int, d: int, gathers: bool, broadcast_q: bool = False, context: bool = False) -> str:
    """(qkv [B, T, 3 * H * D], rows [R]) -> (Q K^T) V as [B * H, R, D], the projections permuted as
    torch-mlir exports them; B and T dynamic. R = T, or with `broadcast_q` Q's T rows broadcast to R
    (a real broadcast when T = 1: the gathers' path). With `context`, the result permuted back to
    [B, R, H * D] as attention's context."""
    w = heads * d
    result = f"tensor<?x?x{w}xf32>" if context else f"tensor<?x?x{d}xf32>"
    back = f"""
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [%b, {heads}, %r, {d}] : tensor<?x?x{d}xf32> into tensor<?x{heads}x?x{d}xf32>
  %ec = tensor.empty(%b, %r) : tensor<?x?x{heads}x{d}xf32>
  %ot = linalg.transpose ins(%o4 : tensor<?x{heads}x?x{d}xf32>) outs(%ec : tensor<?x?x{heads}x{d}xf32>) permutation = [0, 2, 1, 3]
  %ctx = tensor.collapse_shape %ot [[0], [1], [2, 3]] : tensor<?x?x{heads}x{d}xf32> into {result}
  return %ctx : {result}""" if context else f"""
  return %o : {result}"""
    bhtd, bhdt = f"tensor<?x{heads}x?x{d}xf32>", f"tensor<?x{heads}x{d}x?xf32>"
    q, k, v = ("qg", "kg", "vg") if gathers else ("qt", "kt", "vt")
    return f"""
func.func @main(%qkv: tensor<?x?x{3 * w}xf32>, %rows: tensor<?xf32>) -> {result} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %nheads = arith.constant {heads} : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %qkv, %c0 : tensor<?x?x{3 * w}xf32>
  %t = tensor.dim %qkv, %c1 : tensor<?x?x{3 * w}xf32>
  %r = tensor.dim %rows, %c0 : tensor<?xf32>
  %q2 = tensor.extract_slice %qkv[0, 0, 0] [%b, %t, {w}] [1, 1, 1] : tensor<?x?x{3 * w}xf32> to tensor<?x?x{w}xf32>
  %k2 = tensor.extract_slice %qkv[0, 0, {w}] [%b, %t, {w}] [1, 1, 1] : tensor<?x?x{3 * w}xf32> to tensor<?x?x{w}xf32>
  %v2 = tensor.extract_slice %qkv[0, 0, {2 * w}] [%b, %t, {w}] [1, 1, 1] : tensor<?x?x{3 * w}xf32> to tensor<?x?x{w}xf32>
  %q = tensor.expand_shape %q2 [[0], [1], [2, 3]] output_shape [%b, %t, {heads}, {d}] : tensor<?x?x{w}xf32> into tensor<?x?x{heads}x{d}xf32>
  %k = tensor.expand_shape %k2 [[0], [1], [2, 3]] output_shape [%b, %t, {heads}, {d}] : tensor<?x?x{w}xf32> into tensor<?x?x{heads}x{d}xf32>
  %v = tensor.expand_shape %v2 [[0], [1], [2, 3]] output_shape [%b, %t, {heads}, {d}] : tensor<?x?x{w}xf32> into tensor<?x?x{heads}x{d}xf32>
  %e1 = tensor.empty(%b, %t) : {bhtd}
  %qt = linalg.transpose ins(%q : tensor<?x?x{heads}x{d}xf32>) outs(%e1 : {bhtd}) permutation = [0, 2, 1, 3]
  %vt = linalg.transpose ins(%v : tensor<?x?x{heads}x{d}xf32>) outs(%e1 : {bhtd}) permutation = [0, 2, 1, 3]
  %e2 = tensor.empty(%b, %t) : {bhdt}
  %kt = linalg.transpose ins(%k : tensor<?x?x{heads}x{d}xf32>) outs(%e2 : {bhdt}) permutation = [0, 2, 3, 1]
  {_gather("qg", "qt", bhtd, 2, "%r" if broadcast_q else "%t") + _gather("kg", "kt", bhdt, 3) + _gather("vg", "vt", bhtd, 2) if gathers else ""}
  %qc = tensor.collapse_shape %{q} [[0, 1], [2], [3]] : {bhtd} into tensor<?x?x{d}xf32>
  %kc = tensor.collapse_shape %{k} [[0, 1], [2], [3]] : {bhdt} into tensor<?x{d}x?xf32>
  %vc = tensor.collapse_shape %{v} [[0, 1], [2], [3]] : {bhtd} into tensor<?x?x{d}xf32>
  %bh = arith.muli %b, %nheads : index
  %es = tensor.empty(%bh, %r, %t) : tensor<?x?x?xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %s = linalg.batch_matmul ins(%qc, %kc : tensor<?x?x{d}xf32>, tensor<?x{d}x?xf32>) outs(%fs : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %eo = tensor.empty(%bh, %r) : tensor<?x?x{d}xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<?x?x{d}xf32>) -> tensor<?x?x{d}xf32>
  %o = linalg.batch_matmul ins(%s, %vc : tensor<?x?x?xf32>, tensor<?x?x{d}xf32>) outs(%fo : tensor<?x?x{d}xf32>) -> tensor<?x?x{d}xf32>{back}
}}
"""


def _reference(qkv: np.ndarray, heads: int, d: int, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """(Q K^T) V in float64 (Q's rows broadcast to `rows`), and the same on absolute values (the error
    scale)."""
    b, t, _ = qkv.shape
    x = qkv.astype(np.float64).reshape(b, t, 3, heads, d).transpose(2, 0, 3, 1, 4).reshape(3, b * heads, t, d)
    q, k, v = x
    q = np.broadcast_to(q, (b * heads, rows, d))
    return (q @ k.transpose(0, 2, 1)) @ v, (np.abs(q) @ np.abs(k).transpose(0, 2, 1)) @ np.abs(v)


# (heads, D): GPT-2's 12 x 64; D = 32 (a multiple of the 16 lanes: no pack edge rows); D = 20 (edge
# rows and a partial vector); D = 136 (past one reduction block of kc = 128)
@pytest.mark.parametrize("heads,d", [(12, 64), (2, 32), (3, 20), (1, 136)])
@pytest.mark.parametrize("gathers", [False, True], ids=["plain", "broadcast-gathers"])
@pytest.mark.parametrize("context", [False, True], ids=["heads-out", "context-out"])
def test_attention_matmuls_on_head_views(rng, heads, d, gathers, context):
    exe = ftuner_mlir.compile(attention(heads, d, gathers, context=context))
    for b, t in [(1, 1), (2, 1), (1, 2), (3, 7), (2, 61), (1, 130)]:
        qkv = random(rng, (b, t, 3 * heads * d))
        shape = (b, t, heads * d) if context else (b * heads, t, d)
        out = poisoned(shape)
        exe(qkv, random(rng, (t,)), out=out)
        ref, scale = (_as_context(x, b, heads) if context else x for x in _reference(qkv, heads, d, t))
        assert_matches(out, ref, scale)


def _as_context(x: np.ndarray, b: int, heads: int) -> np.ndarray:
    """[B * H, T, D] -> [B, T, H * D]"""
    _, t, d = x.shape
    return x.reshape(b, heads, t, d).transpose(0, 2, 1, 3).reshape(b, t, heads * d)


def test_broadcast_gather_still_runs_when_it_broadcasts(rng):
    """Q of one row broadcast to R rows: the versioned call's else branch (the transposes, gathers and
    the original dispatch, moved there) runs, and the head-view branch when nothing broadcasts."""
    exe = ftuner_mlir.compile(attention(2, 20, gathers=True, broadcast_q=True, context=True))
    for b, t, rows in [(2, 1, 5), (1, 1, 37), (3, 9, 9), (1, 1, 1)]:
        qkv = random(rng, (b, t, 3 * 2 * 20))
        out = poisoned((b, rows, 2 * 20))
        exe(qkv, random(rng, (rows,)), out=out)
        ref, scale = (_as_context(x, b, 2) for x in _reference(qkv, 2, 20, rows))
        assert_matches(out, ref, scale)


def reshaped_scores(heads: int, d: int) -> str:
    """(qkv [B, T, 3 * H * D], rows [R]) -> Q K^T as torch-mlir exports it with the batch dynamic: the
    heads merged by `tensor.reshape`s to computed shapes [B * H * T / R, R, D] (and K^T's [., D, R]),
    the batch merge view(B * H, -1, D) when R = T; any other R divides the rows differently (a valid
    program the head views must not take: the versioned call's fallback)."""
    w = heads * d
    bthd, bhtd, bhdt = (f"tensor<?x?x{heads}x{d}xf32>", f"tensor<?x{heads}x?x{d}xf32>", f"tensor<?x{heads}x{d}x?xf32>")
    return f"""
func.func @main(%qkv: tensor<?x?x{3 * w}xf32>, %rows: tensor<?xf32>) -> tensor<?x?x?xf32> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %qkv, %c0 : tensor<?x?x{3 * w}xf32>
  %t = tensor.dim %qkv, %c1 : tensor<?x?x{3 * w}xf32>
  %r = tensor.dim %rows, %c0 : tensor<?xf32>
  %q2 = tensor.extract_slice %qkv[0, 0, 0] [%b, %t, {w}] [1, 1, 1] : tensor<?x?x{3 * w}xf32> to tensor<?x?x{w}xf32>
  %k2 = tensor.extract_slice %qkv[0, 0, {w}] [%b, %t, {w}] [1, 1, 1] : tensor<?x?x{3 * w}xf32> to tensor<?x?x{w}xf32>
  %q = tensor.expand_shape %q2 [[0], [1], [2, 3]] output_shape [%b, %t, {heads}, {d}] : tensor<?x?x{w}xf32> into {bthd}
  %k = tensor.expand_shape %k2 [[0], [1], [2, 3]] output_shape [%b, %t, {heads}, {d}] : tensor<?x?x{w}xf32> into {bthd}
  %e1 = tensor.empty(%b, %t) : {bhtd}
  %qt = linalg.transpose ins(%q : {bthd}) outs(%e1 : {bhtd}) permutation = [0, 2, 1, 3]
  %e2 = tensor.empty(%b, %t) : {bhdt}
  %kt = linalg.transpose ins(%k : {bthd}) outs(%e2 : {bhdt}) permutation = [0, 2, 3, 1]
  %nheads = arith.constant {heads} : index
  %bh = arith.muli %b, %nheads : index
  %bht = arith.muli %bh, %t : index
  %n = arith.divui %bht, %r : index
  %n64 = arith.index_cast %n : index to i64
  %r64 = arith.index_cast %r : index to i64
  %d64 = arith.constant {d} : i64
  %qshape = tensor.from_elements %n64, %r64, %d64 : tensor<3xi64>
  %kshape = tensor.from_elements %n64, %d64, %r64 : tensor<3xi64>
  %qc = tensor.reshape %qt(%qshape) : ({bhtd}, tensor<3xi64>) -> tensor<?x?x{d}xf32>
  %kc = tensor.reshape %kt(%kshape) : ({bhdt}, tensor<3xi64>) -> tensor<?x{d}x?xf32>
  %es = tensor.empty(%n, %r, %r) : tensor<?x?x?xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %s = linalg.batch_matmul ins(%qc, %kc : tensor<?x?x{d}xf32>, tensor<?x{d}x?xf32>) outs(%fs : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %s : tensor<?x?x?xf32>
}}
"""


@pytest.mark.parametrize("precision", ["f32", "bf16"])
def test_computed_reshapes_are_read_as_head_views_when_they_merge_batch_and_heads(rng, precision):
    """The reshape is the batch merge (R = T): the head-view dispatch; R a proper divisor of T: the
    reshape as it is, through the versioned call's other branch. Both from one compilation."""
    heads, d = 3, 20
    exe = ftuner_mlir.compile(reshaped_scores(heads, d), matmul_precision=precision)
    # bf16 where the host has an engine faster than its fp32 FMAs: the inputs rounded as the reference
    # rounds them; elsewhere (an Intel CPU without AMX: vdpbf16ps at half the FMAs' rate) it stays fp32
    rounded = precision == "bf16" and engine_in_use(detect_host())[0] != "none"
    rtol = 1e-5 if rounded else 1e-4
    for b, t, r in [(2, 7, 7), (1, 1, 1), (3, 12, 12), (3, 12, 4), (2, 6, 1), (1, 61, 61)]:
        qkv = random(rng, (b, t, 3 * heads * d))
        out = poisoned((b * heads * t // r, r, r))
        exe(qkv, random(rng, (r,)), out=out)
        x = qkv.astype(np.float64).reshape(b, t, 3, heads, d).transpose(2, 0, 3, 1, 4)
        q = x[0].reshape(b * heads * t // r, r, d)                      # [B, H, T, D] read as [N, R, D]
        kt = x[1].transpose(0, 1, 3, 2).reshape(b * heads * t // r, d, r)   # [B, H, D, T] read as [N, D, R]
        if rounded:
            q, kt = (v.astype(np.float32).astype(ml_dtypes.bfloat16).astype(np.float64) for v in (q, kt))
        assert_matches(out, q @ kt, np.abs(q) @ np.abs(kt), rtol=rtol)
