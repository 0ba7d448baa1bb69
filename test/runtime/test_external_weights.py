"""Weights out of band (ir/weights.py): a module names a file of raw bytes and each blob's offset in it;
the compiler attaches them when it parses the text, packs and links them from the mapped bytes, and
the results match float64 numpy. A missing or short file is a clear error, from compile() and from
ftuner-opt; a failure's reproducer keeps its own copy of the weights."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from mlir import ir

import ftuner_mlir
from ftuner_mlir.backends import isolate
from ftuner_mlir.errors import CompileError
from ftuner_mlir.backends.cpu.options import BuildOptions
from ftuner_mlir.ir import weights
from ftuner_mlir.ir.resources import constant_array

from .helpers import assert_matches, poisoned, random, resident_kb

K, N = 67, 45          # odd sizes; the weight is (K, N), the bias (N,)


def _external(tmp_path, w: np.ndarray, b: np.ndarray, file_bytes: int | None = None) -> str:
    """y = x @ w + b on x of any row count, w and b in tmp_path/weights.bin (b at an aligned offset)."""
    offset = -(-w.nbytes // 64) * 64
    data = bytearray(offset + b.nbytes)
    data[:w.nbytes], data[offset:] = w.tobytes(), b.tobytes()
    path = tmp_path / "weights.bin"
    path.write_bytes(bytes(data[:file_bytes]))
    return f"""
module attributes {{ftuner.external_weights = {{file = "{path}", offsets = {{w = 0 : i64, b = {offset} : i64}}}}}} {{
  func.func @f(%x: tensor<?x{K}xf32>) -> tensor<?x{N}xf32> {{
    %c0 = arith.constant 0 : index
    %w = arith.constant dense_resource<w> : tensor<{K}x{N}xf32>
    %b = arith.constant dense_resource<b> : tensor<{N}xf32>
    %m = tensor.dim %x, %c0 : tensor<?x{K}xf32>
    %e = tensor.empty(%m) : tensor<?x{N}xf32>
    %bias = linalg.broadcast ins(%b : tensor<{N}xf32>) outs(%e : tensor<?x{N}xf32>) dimensions = [0]
    %y = linalg.matmul ins(%x, %w : tensor<?x{K}xf32>, tensor<{K}x{N}xf32>) outs(%bias : tensor<?x{N}xf32>) -> tensor<?x{N}xf32>
    return %y : tensor<?x{N}xf32>
  }}
}}
"""


def test_parse_attaches_the_file_bytes(tmp_path, rng):
    w, b = random(rng, (K, N)), random(rng, (N,))
    with ir.Context(), ir.Location.unknown():
        module = weights.parse(_external(tmp_path, w, b), ir.Context.current)
        constants = [op for op in module.body.operations[0].regions[0].blocks[0].operations
                     if op.operation.name == "arith.constant"][1:]
        np.testing.assert_array_equal(constant_array(constants[0].result), w)
        np.testing.assert_array_equal(constant_array(constants[1].result), b)
        assert "ftuner.external_weights" not in str(module.operation.attributes)


def test_release_gives_back_a_weights_pages_and_keeps_its_bytes(tmp_path, rng):
    w = random(rng, (1031, 509))                    # ~2 MB, not a whole number of pages
    path = tmp_path / "weights.bin"
    path.write_bytes(b"\1" * 100 + w.tobytes())
    view = weights._mapped(str(path))[100:100 + w.nbytes].view(np.float32).reshape(w.shape).T
    np.testing.assert_array_equal(view.T, w)        # read: every page is resident
    address = view.ctypes.data
    assert resident_kb(address) >= w.nbytes // 1024
    weights.release(view)
    assert resident_kb(address) <= 8               # at most the two shared edge pages stay
    np.testing.assert_array_equal(view.T, w)        # the bytes read again, from the file
    weights.release(w)                              # not a mapped file: left alone
    np.testing.assert_array_equal(view.T, w)


def test_compiled_module_computes_with_the_file_weights(tmp_path, rng):
    w, b = random(rng, (K, N)), random(rng, (N,))
    exe = ftuner_mlir.compile(_external(tmp_path, w, b), cache=False)
    for rows in (1, 7, 130):                       # row counts nobody saw when compiling
        x = random(rng, (rows, K))
        out = poisoned((rows, N))
        got = exe(x, out=out)
        assert got is out
        reference = x.astype(np.float64) @ w.astype(np.float64) + b
        assert_matches(got, reference, np.abs(x) @ np.abs(w) + np.abs(b))


def test_a_missing_or_short_file_is_a_clear_error(tmp_path, rng):
    w, b = random(rng, (K, N)), random(rng, (N,))
    text = _external(tmp_path, w, b, file_bytes=100)
    with pytest.raises(CompileError, match=r"weights.bin holds 100 bytes; blob \w+ .* needs bytes"):
        ftuner_mlir.compile(text, cache=False)
    (tmp_path / "weights.bin").unlink()
    with pytest.raises(CompileError, match="cannot read the weights file .*weights.bin"):
        ftuner_mlir.compile(text, cache=False)
    source = tmp_path / "in.mlir"
    source.write_text(text)
    proc = subprocess.run([sys.executable, "-m", "ftuner_mlir.tools.opt", "--ftuner-lower-cpu", str(source)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "error: cannot read the weights file" in proc.stderr
    assert str(source) in proc.stderr                 # located: the file it was reading


def test_a_reproducer_keeps_its_own_weights(tmp_path, rng, monkeypatch):
    monkeypatch.setenv("FTUNER_CACHE_DIR", str(tmp_path / "cache"))
    w, b = random(rng, (K, N)), random(rng, (N,))
    text = _external(tmp_path, w, b)
    command = isolate.save_reproducer(text, BuildOptions(target=ftuner_mlir.parse_target("host")))
    saved = Path(command.split()[-1])
    (tmp_path / "weights.bin").unlink()                # the front end's copy goes after the compile
    replay = saved.read_text()
    assert f'file = "{saved.parent / "weights.bin"}"' in replay
    exe = ftuner_mlir.compile(replay, cache=False)
    x = random(rng, (3, K))
    assert_matches(exe(x), x.astype(np.float64) @ w + b, np.abs(x) @ np.abs(w) + np.abs(b))


def test_other_weights_in_the_same_file_are_another_module(tmp_path, rng, monkeypatch):
    """The text names the weights file, not its bytes: the module cache keys the file's digest too, so
    the same text over new weights compiles again instead of returning the first weights' results."""
    monkeypatch.setenv("FTUNER_CACHE_DIR", str(tmp_path / "cache"))
    x = random(rng, (9, K))
    for _ in range(2):
        w, b = random(rng, (K, N)), random(rng, (N,))
        out = ftuner_mlir.compile(_external(tmp_path, w, b))(x, out=poisoned((9, N)))
        wide = x.astype(np.float64)
        assert_matches(out, wide @ w + b, np.abs(wide) @ np.abs(w) + np.abs(b))
