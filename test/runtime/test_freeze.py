"""freeze_arguments(): arguments turned into module constants (weights prepacked at compile time), the
results against float64 numpy for row counts nobody saw when compiling, and every misuse a ValueError."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ftuner_mlir
from ftuner_mlir import models
from ftuner_mlir.errors import CompileError

from .helpers import assert_matches, poisoned, random

BIN = Path(sys.executable).parent
ROWS = (1, 2, 7, 16, 31, 300)


def _dispatch_calls(text: str) -> list[str]:
    tiled = subprocess.run([str(BIN / "ftuner-opt"), "--target=x86-avx512", "--ftuner-select-ukernels",
                            "--ftuner-tile"], input=text, capture_output=True, text=True, check=True).stdout
    return sorted({line.split("@")[1].split("(")[0] for line in tiled.splitlines()
                   if "call @ftuner_dispatch" in line})


@pytest.mark.parametrize("n, k", [(45, 37), (64, 48), (1, 5)])
def test_frozen_dense_weight_is_packed_once_and_exact(rng, n, k):
    w = random(rng, (n, k))
    text = ftuner_mlir.freeze_arguments(models.dense(n, k), {1: w})
    assert "dense_resource<ftuner_frozen_dense_1>" in text
    assert "@dense(%arg0: tensor<?x" + str(k) + "xf32>) ->" in text          # one argument left
    assert [name for name in _dispatch_calls(text) if "_pw_" in name]       # the prepacked-panel dispatch
    exe = ftuner_mlir.compile(text)
    for m in ROWS:
        x = random(rng, (m, k))
        out = poisoned((m, n))
        exe(x, out=out)
        assert_matches(out, x.astype(np.float64) @ w.T.astype(np.float64), np.abs(x) @ np.abs(w).T)


def test_freezing_a_dynamic_argument_fixes_its_dims(rng):
    b = random(rng, (37, 19))
    exe = ftuner_mlir.compile(ftuner_mlir.freeze_arguments(models.matmul(), {1: b}))
    for m in (1, 5, 129):
        a = random(rng, (m, 37))
        out = poisoned((m, 19))
        exe(a, out=out)
        assert_matches(out, a.astype(np.float64) @ b.astype(np.float64), np.abs(a) @ np.abs(b))
    with pytest.raises(ValueError, match="argument #0 dim 1 must be 37"):
        exe(random(rng, (4, 36)))
    with pytest.raises(ValueError, match="takes 1 arguments, got 2"):
        exe(random(rng, (4, 37)), b)


def test_freezing_the_first_argument_keeps_the_others_in_order(rng):
    a = random(rng, (6, 11))
    exe = ftuner_mlir.compile(ftuner_mlir.freeze_arguments(models.matmul(), {0: a}))
    b = random(rng, (11, 40))
    assert_matches(exe(b), a.astype(np.float64) @ b.astype(np.float64), np.abs(a) @ np.abs(b))


TWO = """
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> { return %a : tensor<4xf32> }
func.func @g(%a: tensor<4xf32>) -> tensor<4xf32> { return %a : tensor<4xf32> }
"""


@pytest.mark.parametrize("source, values, function, message", [
    (models.dense(8, 4), {1: np.ones((8, 4), np.float64)}, None, "element type f32; got an array of dtype float64"),
    (models.dense(8, 4), {1: np.ones((8, 5), np.float32)}, None, r"argument #1 has type tensor<8x4xf32>; got an array of shape \(8, 5\)"),
    (models.dense(8, 4), {1: np.ones((8,), np.float32)}, None, "got an array of shape"),
    (models.dense(8, 4), {2: np.ones((8, 4), np.float32)}, None, "arguments #0..#1; cannot freeze argument 2"),
    (models.dense(8, 4), {-1: np.ones((8, 4), np.float32)}, None, "cannot freeze argument -1"),
    (models.dense(8, 4), {"w": np.ones((8, 4), np.float32)}, None, "cannot freeze argument 'w'"),
    (models.dense(8, 4), {1: [[1.0] * 4] * 8}, None, "must be frozen to a numpy.ndarray, got list"),
    (models.dense(8, 4), {}, None, "non-empty dict"),
    (TWO, {0: np.ones(4, np.float32)}, None, r"2 public functions \['f', 'g'\]: name one"),
    (TWO, {0: np.ones(4, np.float32)}, "h", r"no public function @h; have \['f', 'g'\]"),
])
def test_misuse_is_a_value_error_naming_the_argument(source, values, function, message):
    with pytest.raises(ValueError, match=message):
        ftuner_mlir.freeze_arguments(source, values, function=function)


def test_a_named_function_and_malformed_text():
    text = ftuner_mlir.freeze_arguments(TWO, {0: np.arange(4, dtype=np.float32)}, function="g")
    assert "func.func @g() -> tensor<4xf32>" in text and "func.func @f(%arg0: tensor<4xf32>)" in text
    exe = ftuner_mlir.compile(text)
    np.testing.assert_array_equal(exe["g"](), np.arange(4, dtype=np.float32))
    with pytest.raises(CompileError, match="expected"):
        ftuner_mlir.freeze_arguments("func.func @f(", {0: np.ones(4, np.float32)})
    with pytest.raises(TypeError, match="takes MLIR text"):
        ftuner_mlir.freeze_arguments(b"func.func", {0: np.ones(4, np.float32)})
