"""Dispatch functions are compiled once and called (not inlined per op): many ops of one uKernel set
share one dispatch, and a call whose operand is a strided view (no unit innermost stride) still gets
the right answer (it is inlined into its caller instead)."""
from pathlib import Path

import numpy as np
import pytest

import ftuner_mlir
from ftuner_mlir import models

from .helpers import assert_matches, random


def test_chain_of_layers_shares_one_dispatch(rng):
    layers = 6
    exe = ftuner_mlir.compile(models.dense_chain(layers), isolate=False)
    text = exe.llvm_dialect
    assert text.count("llvm.func @ftuner_dispatch_") == 1
    assert text.count("llvm.call @ftuner_dispatch_") == layers
    ws = [random(rng, (768, 768)) / np.float32(np.sqrt(768)) for _ in range(layers)]
    isolated = ftuner_mlir.compile(models.dense_chain(layers))
    for m in (1, 7, 130):
        x = random(rng, (m, 768))
        ref, scale = x.astype(np.float64), np.abs(x).astype(np.float64)
        for w in ws:
            ref, scale = ref @ w.astype(np.float64).T, scale @ np.abs(w).astype(np.float64).T
        for compiled in (exe, isolated):
            out = np.full((m, 768), np.nan, np.float32)
            assert_matches(compiled(x, *ws, out=out), ref, scale)


STRIDED = (Path(__file__).parent / "Inputs" / "every-other-column.mlir").read_text()   # columns 1, 3, ...


@pytest.mark.parametrize("m, k, n", [(1, 1, 1), (17, 33, 40), (64, 64, 64)])
def test_strided_operand_is_correct(rng, m, k, n):
    exe = ftuner_mlir.compile(STRIDED, isolate=False)
    assert "llvm.call @ftuner_dispatch_" not in exe.llvm_dialect     # inlined: its operand is strided
    a, b = random(rng, (m, 2 * k)), random(rng, (k, n))
    ref = a[:, 1::2].astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a[:, 1::2]).astype(np.float64) @ np.abs(b).astype(np.float64)
    out = np.full((m, n), np.nan, np.float32)
    assert_matches(exe(a, b, out=out), ref, scale)


TWO_MATMULS = """
func.func @two(%a: tensor<?x{k1}xf32>, %b: tensor<{k1}x?xf32>, %c: tensor<?x{k2}xf32>, %d: tensor<{k2}x?xf32>,
               %x: tensor<?x?xf32>, %y: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {{
  %r = linalg.matmul ins(%a, %b : tensor<?x{k1}xf32>, tensor<{k1}x?xf32>) outs(%x : tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = linalg.matmul ins(%c, %d : tensor<?x{k2}xf32>, tensor<{k2}x?xf32>) outs(%y : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r, %s : tensor<?x?xf32>, tensor<?x?xf32>
}}
"""


def test_static_strides_only_where_every_caller_agrees():
    """The dispatch's signature keeps a stride static only when all its callers' buffers have that
    static stride (rows of a K x N weight with static N...); two callers with different static K give
    a dynamic one."""
    from mlir import ir

    from ftuner_mlir.lowering.dispatch.dispatch_calls import _known_strides_type
    with ir.Context(), ir.Location.unknown():
        t = ir.MemRefType(ir.Type.parse("memref<?x?xf32, strided<[?, ?], offset: ?>>"))
        same = [ir.MemRefType(ir.Type.parse(s)) for s in ("memref<?x96xf32>", "memref<7x96xf32>")]
        mixed = [ir.MemRefType(ir.Type.parse(s)) for s in ("memref<?x96xf32>", "memref<?x40xf32>")]
        assert str(_known_strides_type(t, same)) == "memref<?x?xf32, strided<[96, 1], offset: ?>>"
        assert str(_known_strides_type(t, mixed)) == "memref<?x?xf32, strided<[?, 1], offset: ?>>"
        panels = ir.MemRefType(ir.Type.parse("memref<?x?x32xf32, strided<[?, ?, ?], offset: ?>>"))
        assert str(_known_strides_type(panels, [ir.MemRefType(ir.Type.parse("memref<3x37x32xf32>"))])) == \
            "memref<?x?x32xf32, strided<[1184, 32, 1], offset: ?>>"


@pytest.mark.parametrize("k1, k2", [(96, 96), (96, 40), (1, 33)])
def test_shared_dispatch_with_static_strides_is_correct(rng, k1, k2):
    exe = ftuner_mlir.compile(TWO_MATMULS.format(k1=k1, k2=k2))
    for m, n in [(1, 1), (19, 45), (300, 70)]:
        a, b, c, d = random(rng, (m, k1)), random(rng, (k1, n)), random(rng, (m, k2)), random(rng, (k2, n))
        x, y = random(rng, (m, n)), random(rng, (m, n))
        r, s = exe(a, b, c, d, x, y)
        for got, lhs, rhs, init in ((r, a, b, x), (s, c, d, y)):
            ref = init + lhs.astype(np.float64) @ rhs.astype(np.float64)
            assert_matches(got, ref, np.abs(init) + np.abs(lhs).astype(np.float64) @ np.abs(rhs))
