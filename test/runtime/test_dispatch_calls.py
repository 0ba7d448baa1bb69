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
