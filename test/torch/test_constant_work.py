"""No per-call work that depends on constants alone: the exported models' public function, after the
uKernels are selected and tiled (constant weights packed into panels, transposed weights read through
the matmul_transpose_b family), has no op that reads only constants. A hand-written module with such
an op shows that the check finds one."""
import numpy as np
import pytest

import ftuner_mlir.torch  # noqa: F401  before torch
from torch.export import Dim
from mlir import ir

import ftuner_mlir
from ftuner_mlir import driver
from ftuner_mlir.analysis.constant_work import constant_only_ops
from ftuner_mlir.ir import weights
from ftuner_mlir.lowering.graph.constant_generics import fold_constant_generics
from ftuner_mlir.passes.cpu.graph import FoldConstantGenerics
from ftuner_mlir.passes.lower_cpu import LowerCpu
from ftuner_mlir.torch import exporting

from .models import MAX_T, ids, tiny


def _tiled(text: str, fold: bool = True) -> ir.Module:
    """`text` after ftuner-select-ukernels and ftuner-tile and, with `fold`, ftuner-lower-cpu's first
    step (constant generics folded): the IR its tensor stages work on."""
    target = ftuner_mlir.parse_target("host")
    module = weights.parse(text, ir.Context())
    driver.run_pipeline(module, driver.parse_pipeline("ftuner-select-ukernels,ftuner-tile", target))
    assert isinstance(LowerCpu(target=target).passes()[0], FoldConstantGenerics)
    if fold:
        with module.context:
            fold_constant_generics(module.operation)
    return module


@pytest.mark.parametrize("kind", ["bert", "gpt2"])
def test_exported_models_do_no_constant_only_work(kind, tmp_path):
    example = ids(np.random.default_rng(0), 2, 24)
    program = exporting.export(tiny(kind), (example,), None, ({1: Dim("T", min=2, max=MAX_T)},))
    module = _tiled(exporting.to_linalg(program, tmp_path))
    with module.context:
        left = [f"{op.operation.name} at {op.location}" for op in constant_only_ops(module.operation)]
    assert not left, f"{kind}: per-call work on constants alone: {left}"
    text = str(module)
    assert "ftuner_dispatch_matmul_transpose_b" in text and "_pw" in text    # the weights went into panels


def test_the_check_finds_a_transposed_constant_and_its_user():
    module = _tiled(CONSTANT_WORK, fold=False)
    with module.context:
        names = [op.operation.name for op in constant_only_ops(module.operation)]
    # the transpose and the generic on its result (the constant 2.0 captured in its body) compute the
    # same value every call; the generic on %x does not
    assert names == ["linalg.transpose", "linalg.generic"]
    folded = _tiled(CONSTANT_WORK)
    with folded.context:
        names = [op.operation.name for op in constant_only_ops(folded.operation)]
    # only generics of constants fold; the one reading the transpose's result stays code (still reported)
    assert names == ["linalg.transpose", "linalg.generic"]


IOTA = """
func.func @f(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<5x3xf32>, tensor<5x3xf32>) {
  %e = tensor.empty() : tensor<5x3xi64>
  %iota = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<5x3xi64>) {
    ^bb0(%o: i64):
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %ii = arith.index_cast %i : index to i64
      %jj = arith.index_cast %j : index to i64
      %three = arith.constant 3 : i64
      %m = arith.muli %ii, %three : i64
      %s = arith.subi %m, %jj : i64
      linalg.yield %s : i64
  } -> tensor<5x3xi64>
  %ef = tensor.empty() : tensor<5x3xf32>
  %half = arith.constant 0.5 : f32
  %seven = arith.constant 7 : i64
  %f = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%iota : tensor<5x3xi64>) outs(%ef : tensor<5x3xf32>) {
    ^bb0(%a: i64, %o: f32):
      %big = arith.cmpi sgt, %a, %seven : i64
      %v = arith.sitofp %a : i64 to f32
      %h = arith.mulf %v, %half : f32
      %r = arith.select %big, %h, %v : f32
      linalg.yield %r : f32
  } -> tensor<5x3xf32>
  %eb = tensor.empty() : tensor<5x3xi1>
  %mask = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                          iterator_types = ["parallel", "parallel"]}
      ins(%iota : tensor<5x3xi64>) outs(%eb : tensor<5x3xi1>) {
    ^bb0(%a: i64, %o: i1):
      %big = arith.cmpi sge, %a, %seven : i64
      linalg.yield %big : i1
  } -> tensor<5x3xi1>
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%mask : tensor<5x3xi1>) outs(%ef : tensor<5x3xf32>) {
    ^bb0(%b: i1, %o: f32):
      %r = arith.select %b, %one, %zero : f32
      linalg.yield %r : f32
  } -> tensor<5x3xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %ex = tensor.empty(%n) : tensor<?xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%ex : tensor<?xf32>) {
    ^bb0(%a: f32, %o: f32):
      %h = arith.mulf %a, %half : f32
      linalg.yield %h : f32
  } -> tensor<?xf32>
  return %y, %f, %g : tensor<?xf32>, tensor<5x3xf32>, tensor<5x3xf32>
}"""


def test_folded_generics_compute_what_the_code_did(rng):
    """The iota and its float map fold to constants; the i1 mask (and the map reading it) stays code;
    the compiled module's results match numpy, and the generic on the argument is left alone."""
    folded = _tiled(IOTA)
    with folded.context:
        assert [op.operation.name for op in constant_only_ops(folded.operation)] == ["linalg.generic"] * 2
        assert str(folded).count("linalg.generic") == 3
    x = rng.standard_normal(7).astype(np.float32)
    y, f, mask = ftuner_mlir.compile(IOTA)(x)
    iota = 3 * np.arange(5)[:, None] - np.arange(3)[None, :]
    np.testing.assert_array_equal(f, np.where(iota > 7, 0.5 * iota, iota).astype(np.float32))
    np.testing.assert_array_equal(mask, (iota >= 7).astype(np.float32))
    np.testing.assert_array_equal(y, 0.5 * x)


CONSTANT_WORK = """
func.func @f(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<4x2xf32>) {
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %e = tensor.empty() : tensor<4x2xf32>
  %t = linalg.transpose ins(%w : tensor<2x4xf32>) outs(%e : tensor<4x2xf32>) permutation = [1, 0]
  %two = arith.constant 2.0 : f32
  %e2 = tensor.empty() : tensor<4x2xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<4x2xf32>) outs(%e2 : tensor<4x2xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.mulf %a, %two : f32
      linalg.yield %m : f32
  } -> tensor<4x2xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %e3 = tensor.empty(%n) : tensor<?x4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x4xf32>) outs(%e3 : tensor<?x4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.mulf %a, %two : f32
      linalg.yield %m : f32
  } -> tensor<?x4xf32>
  return %y, %s : tensor<?x4xf32>, tensor<4x2xf32>
}"""
