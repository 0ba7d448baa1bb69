"""Ops torch-mlir's exports contain, each compiled and checked on its own: failed cf.asserts, constant
i1 masks, and the size arithmetic the shape rules follow (affine.apply, collapse/expand_shape,
tensor.reshape to a from_elements shape)."""
import threading
from pathlib import Path

import numpy as np
import pytest

import ftuner_mlir
from ftuner_mlir.runtime.function import AssertionFailure

INPUTS = Path(__file__).parent / "Inputs"
GATHER = (INPUTS / "gather-asserts.mlir").read_text()


@pytest.mark.parametrize("isolate", [True, False], ids=["library", "in-process"])
def test_failed_asserts_raise_with_their_message(rng, isolate):
    exe = ftuner_mlir.compile(GATHER, isolate=isolate)
    table = rng.standard_normal((5, 3)).astype(np.float32)
    for n in (1, 4, 9):
        ids = rng.integers(0, 5, n).astype(np.int64)
        np.testing.assert_array_equal(exe(table, ids), table[ids])
    with pytest.raises(AssertionFailure, match=r"index must be smaller than dim size \(.*:12:5\)"):
        exe(table, np.array([1, 5, 2], np.int64))
    with pytest.raises(AssertionFailure, match="index must be larger or equal to 0"):
        exe(table, np.array([-1], np.int64))
    with pytest.raises(AssertionFailure, match="index must be smaller than dim size"):
        exe(table, np.array([3, 10**12, -10**12], np.int64))        # the reads are clamped: no fault
    ids = np.array([4, 0], np.int64)
    np.testing.assert_array_equal(exe(table, ids), table[ids])      # the failure was taken: calls go on


@pytest.mark.parametrize("isolate", [True, False], ids=["library", "in-process"])
def test_failed_asserts_are_per_call_under_threads(isolate):
    """8 threads, 10,000 calls mixing valid and out-of-range ids on one module: every valid call returns
    the gather, every invalid one raises, whatever the other threads do meanwhile."""
    exe = ftuner_mlir.compile(GATHER, isolate=isolate)
    table = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    failures = []

    def worker(seed):
        rng = np.random.default_rng(seed)
        for _ in range(1250):
            ids = rng.integers(0, 5, int(rng.integers(1, 40))).astype(np.int64)
            bad = rng.random() < 0.5
            if bad:
                ids[rng.integers(0, len(ids))] = rng.choice([5, 7, -1, 10**9])
            try:
                result = exe(table, ids)
            except AssertionFailure:
                if not bad:
                    failures.append(("spurious assert", ids))
                continue
            if bad:
                failures.append(("missed assert", ids))
            elif not np.array_equal(result, table[ids]):
                failures.append(("wrong result", ids))

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, f"{len(failures)} of 10000 calls wrong; first: {failures[0]}"


@pytest.mark.parametrize("isolate", [True, False], ids=["library", "in-process"])
def test_failed_asserts_of_a_gather_over_the_cores(rng, isolate):
    """Rows 67 wide: from 490 ids on the gather runs over the cores (>= 32768 points), each row read as
    vectors with its id checked once; a bad id in any row, on any worker, fails that call only."""
    exe = ftuner_mlir.compile(GATHER.replace("5x3xf32", "5x67xf32").replace("?x3xf32", "?x67xf32"),
                              isolate=isolate)
    table = rng.standard_normal((5, 67)).astype(np.float32)
    for n in (1, 7, 489, 1000, 1201):
        ids = rng.integers(0, 5, n).astype(np.int64)
        np.testing.assert_array_equal(exe(table, ids), table[ids])
    for bad in (5, -1, 10**12):
        ids = rng.integers(0, 5, 1201).astype(np.int64)
        ids[rng.integers(600, 1201)] = bad               # in the second worker's rows
        with pytest.raises(AssertionFailure, match="index must be"):
            exe(table, ids)
    ids = rng.integers(0, 5, 1000).astype(np.int64)
    np.testing.assert_array_equal(exe(table, ids), table[ids])


def test_constant_i1_masks(rng):
    exe = ftuner_mlir.compile((INPUTS / "i1-constant-masks.mlir").read_text())
    a = rng.standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_array_equal(exe(a), a * np.array([[1, 0, 1], [0, 0, 1]], np.float32))


RESHAPES = """
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @f(%a: tensor<?x?x4xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %a, %c0 : tensor<?x?x4xf32>
  %t = tensor.dim %a, %c1 : tensor<?x?x4xf32>
  %rows = affine.apply affine_map<()[s0, s1] -> (s0 * s1)>()[%b, %t]
  %flat = tensor.collapse_shape %a [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
  %back = tensor.expand_shape %flat [[0, 1], [2]] output_shape [%b, %t, 4] : tensor<?x4xf32> into tensor<?x?x4xf32>
  %b64 = arith.index_cast %b : index to i64
  %t64 = arith.index_cast %t : index to i64
  %c4 = arith.constant 4 : i64
  %cols = arith.muli %t64, %c4 : i64
  %shape = tensor.from_elements %b64, %cols : tensor<2xi64>
  %two = tensor.reshape %back(%shape) : (tensor<?x?x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %e = tensor.empty(%b, %cols_i) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%two : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.addf %x, %x : f32
    linalg.yield %y : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
"""


def test_size_arithmetic_of_reshapes(rng):
    """Every result and intermediate size follows from the argument through affine.apply, collapse,
    expand and a reshape to a from_elements shape; shapes never seen at compile time included."""
    source = RESHAPES.replace("%e = tensor.empty(%b, %cols_i)",
                              "%cols_i = arith.index_cast %cols : i64 to index\n  %e = tensor.empty(%b, %cols_i)")
    exe = ftuner_mlir.compile(source)
    for shape in ((2, 3, 4), (1, 1, 4), (7, 5, 4)):
        a = rng.standard_normal(shape).astype(np.float32)
        np.testing.assert_array_equal(exe(a), (a + a).reshape(shape[0], -1))


WEIGHTED = """
func.func @f(%a: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %w = arith.constant WEIGHT : tensor<64x64xf32>
  %m = tensor.dim %a, %c0 : tensor<?x64xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m) : tensor<?x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x64xf32>) -> tensor<?x64xf32>
  %r = linalg.matmul ins(%a, %w : tensor<?x64xf32>, tensor<64x64xf32>) outs(%init : tensor<?x64xf32>) -> tensor<?x64xf32>
  return %r : tensor<?x64xf32>
}
"""


@pytest.mark.parametrize("form", ["dense_resource", "dense"])
def test_large_constants_reach_the_library_as_bytes(rng, form):
    """Weights as torch-mlir writes them (a dense_resource blob) or as a dense literal: both skip LLVM
    (backends/cpu/constants.py) and come back exact."""
    import json

    w = rng.standard_normal((64, 64)).astype(np.float32)
    hexdigits = w.tobytes().hex().upper()
    if form == "dense_resource":
        source = WEIGHTED.replace("WEIGHT", "dense_resource<weight>") + \
            f'{{-#\n  dialect_resources: {{\n    builtin: {{\n      weight: "0x04000000{hexdigits}"\n    }}\n  }}\n#-}}\n'
    else:
        source = WEIGHTED.replace("WEIGHT", f'dense<"0x{hexdigits}">')
    exe = ftuner_mlir.compile(source)                   # fresh weights: a new cache entry, kept to read
    folder = Path(exe.library).parent
    manifest = json.loads((folder / "module.json").read_text())
    assert manifest["constant_bytes"] >= w.nbytes
    # the bytes live once, in the file the loader maps over the library's room for them (packed into
    # panels: the weight's first row of 8 columns is a run of the file), not in the library itself
    blob = (folder / manifest["constants"]["file"]).read_bytes()
    assert len(blob) == manifest["constants"]["bytes"] and w[0, :8].tobytes() in blob
    assert w[0, :8].tobytes() not in Path(exe.library).read_bytes()
    for m in (1, 7, 64):
        a = rng.standard_normal((m, 64)).astype(np.float32)
        ref = a.astype(np.float64) @ w.astype(np.float64)
        np.testing.assert_allclose(exe(a), ref, rtol=1e-4, atol=1e-4 * float((np.abs(a) @ np.abs(w)).max()))


def test_linalg_softmax_is_decomposed(rng):
    exe = ftuner_mlir.compile((INPUTS / "softmax.mlir").read_text())
    for m in (1, 5, 31):
        a = rng.standard_normal((m, 8)).astype(np.float32) * 4
        e = np.exp(a.astype(np.float64) - a.max(1, keepdims=True))
        np.testing.assert_allclose(exe(a), e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_row_max_with_and_without_its_argmax(rng):
    """The argmax nobody reads is dropped (lowering/graph/dead_results.py); the maximum must not change, and an
    argmax that is read stays exact. Rows of odd, prime and unit length, -inf entries included."""
    exe = ftuner_mlir.compile((INPUTS / "max-argmax.mlir").read_text())
    for rows, cols in ((1, 1), (3, 17), (13, 1), (64, 131), (7, 1024)):
        x = rng.standard_normal((rows, cols)).astype(np.float32) * 8
        x[rng.random(x.shape) < 0.2] = -np.inf
        np.testing.assert_array_equal(exe["row_max"](x), x.max(1))
        got_max, got_arg = exe["row_max_argmax"](x)
        np.testing.assert_array_equal(got_max, x.max(1))
        # torch's argmax is the first strictly greater element; an all -inf row keeps index 0
        want = np.where(np.isneginf(x.max(1)), 0, x.argmax(1))
        np.testing.assert_array_equal(got_arg, want)
