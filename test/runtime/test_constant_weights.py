"""Constant weights packed into micro-panels at compile time (codegen/weight_panels.py): the panel
layout, reading constants (dense literals, splats, dense_resource blobs) and whole modules, both weight
layouts, against float64 numpy on odd sizes and on row counts nobody saw when compiling."""
import numpy as np
import pytest
from mlir import ir

import ftuner_mlir
from ftuner_mlir.codegen.weight_panels import panels
from ftuner_mlir.ir.resources import blob_constant, constant_array

from .helpers import assert_matches, compile_here, poisoned, random

ROWS = (1, 2, 7, 31, 300, 601)


@pytest.mark.parametrize("n, k, nr", [(45, 37, 32), (1, 5, 32), (64, 3, 16), (33, 8, 16)])
def test_panel_layout(rng, n, k, nr):
    w = random(rng, (n, k))
    p = panels(w, nr)
    assert p.shape == (-(-n // nr), k, nr) and p.flags.c_contiguous
    for col in range(n):
        np.testing.assert_array_equal(p[col // nr, :, col % nr], w[col])
    # the last panel's columns past N are zeros (stored, never read)
    assert not p[-1, :, n - (p.shape[0] - 1) * nr:].any()
    # a weight stored K x N packs from its transposed view alike
    np.testing.assert_array_equal(panels(np.ascontiguousarray(w.T).T, nr), p)


def _blob_module(w: np.ndarray) -> str:
    kind = f"tensor<{'x'.join(map(str, w.shape))}xf32>"
    return (f"func.func @f() -> {kind} {{\n  %w = arith.constant dense_resource<weight> : {kind}\n"
            f"  return %w : {kind}\n}}\n{{-#\n  dialect_resources: {{\n    builtin: {{\n"
            f'      weight: "0x04000000{w.tobytes().hex()}"\n    }}\n  }}\n#-}}\n')


def _returned_constant(module):
    fn = module.body.operations[0]
    return fn.regions[0].blocks[0].operations[0].results[0]


def test_constant_array_reads_every_kind(rng):
    w = random(rng, (3, 5))
    literal = "dense<[" + ", ".join("[" + ", ".join(f"{v:.9e}" for v in row) + "]" for row in w) + "]>"
    with ir.Context(), ir.Location.unknown():
        for text, want in [(_blob_module(w), w),
                           (f"func.func @f() -> tensor<3x5xf32> {{\n %w = arith.constant {literal} : tensor<3x5xf32>\n"
                            f" return %w : tensor<3x5xf32>\n}}", w),
                           ("func.func @f() -> tensor<2x4xf32> {\n %w = arith.constant dense<2.5> : tensor<2x4xf32>\n"
                            " return %w : tensor<2x4xf32>\n}", np.full((2, 4), 2.5, np.float32))]:
            module = ir.Module.parse(text)          # held: the values live as long as it does
            np.testing.assert_array_equal(constant_array(_returned_constant(module)), want)
        # a dynamic-shaped value or a non-constant is not read
        arg = ir.Module.parse("func.func @g(%a: tensor<?xf32>) -> tensor<?xf32> { return %a : tensor<?xf32> }")
        assert constant_array(arg.body.operations[0].regions[0].blocks[0].arguments[0]) is None


def test_new_blob_round_trips_through_the_printer(rng):
    w = random(rng, (4, 7))
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            value = blob_constant(w, "fresh", ir.F32Type.get())
        np.testing.assert_array_equal(constant_array(value), w)
        reparsed = ir.Module.parse(str(module))
        np.testing.assert_array_equal(constant_array(reparsed.body.operations[0].results[0]), w)


def _linear(w: np.ndarray, stored_n_by_k: bool, zero_init: bool) -> str:
    """y = x . W (+ y) with W a dense_resource constant stored K x N, or N x K read through a transpose."""
    rows, cols = w.shape
    k, n = (cols, rows) if stored_n_by_k else (rows, cols)
    wt = f"tensor<{rows}x{cols}xf32>"
    out = f"tensor<?x{n}xf32>"
    lines = [f"func.func @linear(%x: tensor<?x{k}xf32>, %y: {out}) -> {out} {{",
             f"  %w = arith.constant dense_resource<weight> : {wt}"]
    b = "%w"
    if stored_n_by_k:
        lines += [f"  %e = tensor.empty() : tensor<{k}x{n}xf32>",
                  f"  %t = linalg.transpose ins(%w : {wt}) outs(%e : tensor<{k}x{n}xf32>) permutation = [1, 0]"]
        b, wt = "%t", f"tensor<{k}x{n}xf32>"
    init = "%y"
    if zero_init:
        lines += ["  %zero = arith.constant 0.0 : f32",
                  f"  %z = linalg.fill ins(%zero : f32) outs(%y : {out}) -> {out}"]
        init = "%z"
    lines += [f"  %r = linalg.matmul ins(%x, {b} : tensor<?x{k}xf32>, {wt}) outs({init} : {out}) -> {out}",
              f"  return %r : {out}", "}"]
    blob = f'{{-#\n  dialect_resources: {{\n    builtin: {{\n      weight: "0x04000000{w.tobytes().hex()}"\n    }}\n  }}\n#-}}\n'
    return "\n".join(lines) + "\n" + blob


@pytest.mark.parametrize("stored_n_by_k, zero_init, k, n", [
    (False, True, 37, 45), (False, False, 300, 77), (True, True, 37, 45), (True, False, 129, 1),
    (False, False, 768, 96)])
def test_constant_weight_matmul(rng, stored_n_by_k, zero_init, k, n):
    w = random(rng, (n, k) if stored_n_by_k else (k, n))
    exe = ftuner_mlir.compile(_linear(w, stored_n_by_k, zero_init))
    weight = (w.T if stored_n_by_k else w).astype(np.float64)
    for m in ROWS:
        x, y = random(rng, (m, k)), random(rng, (m, n))
        out = poisoned((m, n))
        result = exe(x, y.copy(), out=out)
        assert result is out
        ref = x.astype(np.float64) @ weight + (0 if zero_init else y)
        assert_matches(result, ref, np.abs(x).astype(np.float64) @ np.abs(weight) + np.abs(y))


@pytest.mark.parametrize("target", ["x86-avx2", "x86-avx512"])
def test_constant_weight_other_panel_widths(rng, target):
    """nr = 16 (AVX2's 4x16) and 32 (AVX-512's 8x32) panels; the host runs both."""
    w = random(rng, (53, 70))
    exe = compile_here(_linear(w, False, True), target)
    for m in (1, 9, 130):
        x = random(rng, (m, 53))
        result = exe(x, poisoned((m, 70)))
        ref = x.astype(np.float64) @ w
        assert_matches(result, ref, np.abs(x).astype(np.float64) @ np.abs(w))


def test_panels_are_built_in_the_constants_file(rng):
    """A build packs each weight straight into the file the loader maps (ir/arena.py): a large panel is
    named there by its symbol, a small one (compiled into the code) may end the file, which is then
    mapped whole; both matmuls come back exact."""
    import json
    from pathlib import Path

    w1, w2 = random(rng, (67, 45)), random(rng, (45, 3))          # panels of 12 KB (moved), 3 KB (kept)
    kinds = "tensor<67x45xf32>", "tensor<45x3xf32>"
    blob = "".join(f'      w{i}: "0x04000000{w.tobytes().hex()}",\n' for i, w in ((1, w1), (2, w2)))
    text = f"""func.func @two(%x: tensor<?x67xf32>) -> tensor<?x3xf32> {{
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %w1 = arith.constant dense_resource<w1> : {kinds[0]}
  %w2 = arith.constant dense_resource<w2> : {kinds[1]}
  %m = tensor.dim %x, %c0 : tensor<?x67xf32>
  %e1 = tensor.empty(%m) : tensor<?x45xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<?x45xf32>) -> tensor<?x45xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<?x67xf32>, {kinds[0]}) outs(%z1 : tensor<?x45xf32>) -> tensor<?x45xf32>
  %e2 = tensor.empty(%m) : tensor<?x3xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x3xf32>) -> tensor<?x3xf32>
  %r = linalg.matmul ins(%h, %w2 : tensor<?x45xf32>, {kinds[1]}) outs(%z2 : tensor<?x3xf32>) -> tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}}
{{-#
  dialect_resources: {{
    builtin: {{
{blob.rstrip().rstrip(",")}
    }}
  }}
#-}}
"""
    exe = ftuner_mlir.compile(text)
    folder = Path(exe.library).parent
    manifest = json.loads((folder / "module.json").read_text())
    data = (folder / manifest["constants"]["file"]).read_bytes()
    assert manifest["constants"]["bytes"] == len(data) >= manifest["constant_bytes"]
    assert w1[0, :8].tobytes() in data                  # a panel row: 8 columns of one K row
    assert data.rstrip(b"\0").endswith(w2[-1].tobytes())  # the small panel's last row (then zero columns)
    for m in (1, 5, 97):
        x = random(rng, (m, 67))
        ref = x.astype(np.float64) @ w1 @ w2
        assert_matches(exe(x, out=poisoned((m, 3))), ref, np.abs(x).astype(np.float64) @ np.abs(w1) @ np.abs(w2))
