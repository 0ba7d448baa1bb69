"""Bad calls raise ValueError naming the argument before native code runs; bad modules raise CompileError."""
import numpy as np
import pytest

import ftuner_mlir
from ftuner_mlir import models
from ftuner_mlir.compiler import CompileError


@pytest.fixture(scope="module")
def dense():
    return ftuner_mlir.compile(models.dense())


@pytest.fixture(scope="module")
def matmul():
    return ftuner_mlir.compile(models.matmul())


def f32(*shape):
    return np.ones(shape, np.float32)


@pytest.mark.parametrize("args, message", [
    ((f32(4, 768),), "takes 2 arguments, got 1"),
    ((f32(4, 768), f32(2304, 768), f32(1)), "takes 2 arguments, got 3"),
    ((f32(4, 768).astype(np.float64), f32(2304, 768)), "argument #0 must have dtype float32, got float64"),
    ((f32(4, 768), f32(2304, 768).astype(np.int32)), "argument #1 must have dtype float32, got int32"),
    ((f32(4, 768, 1), f32(2304, 768)), "argument #0 must have rank 2"),
    ((f32(4, 767), f32(2304, 768)), "argument #0 dim 1 must be 768, got 767"),
    ((f32(4, 768), f32(2303, 768)), "argument #1 dim 0 must be 2304, got 2303"),
    ((np.asfortranarray(f32(4, 768)), f32(2304, 768)), "argument #0 must be C-contiguous"),
    ((f32(8, 1536)[:, ::2], f32(2304, 768)), "argument #0 must be C-contiguous"),
    (([[1.0] * 768], f32(2304, 768)), "argument #0 must be a numpy.ndarray"),
])
def test_bad_arguments(dense, args, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        dense(*args)


def test_inconsistent_dynamic_dims(matmul):
    with pytest.raises(ValueError, match=r"argument #1 dim 0 is 6 but must equal argument #0 dim 1, which is 5 "
                                         r"\(operands of linalg.matmul\)"):
        matmul(f32(3, 5), f32(6, 7))


def test_batch_mismatch():
    exe = ftuner_mlir.compile(models.batch_matmul())
    with pytest.raises(ValueError, match="argument #1 dim 0 is 4 but must equal argument #0 dim 0"):
        exe(f32(3, 5, 6), f32(4, 6, 7))


def test_bias_length_checked():
    exe = ftuner_mlir.compile(models.matmul_bias_relu())
    with pytest.raises(ValueError, match="argument #2 dim 0 is 8 but must equal argument #1 dim 1, which is 7"):
        exe(f32(3, 5), f32(5, 7), f32(8))


def test_bad_out(matmul):
    with pytest.raises(ValueError, match=r"out #0 must be a writable C-contiguous float32 array of shape \(3, 7\)"):
        matmul(f32(3, 5), f32(5, 7), out=f32(3, 8))
    with pytest.raises(ValueError, match="has 1 results, got 2 out arrays"):
        matmul(f32(3, 5), f32(5, 7), out=(f32(3, 7), f32(3, 7)))
    frozen = f32(3, 7)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="out #0 must be a writable"):
        matmul(f32(3, 5), f32(5, 7), out=frozen)


def test_several_functions_need_a_name():
    exe = ftuner_mlir.compile(models.matmul() + models.batch_matmul())
    with pytest.raises(ValueError, match=r"2 public functions \['batch_matmul', 'matmul'\]"):
        exe(f32(2, 2), f32(2, 2))
    assert exe["matmul"](f32(2, 3), f32(3, 4)).shape == (2, 4)
    with pytest.raises(KeyError, match="no public function @nope"):
        exe["nope"]


def test_malformed_module_is_a_compile_error():
    with pytest.raises(CompileError, match=r"-:2:\d+: error: use of undeclared SSA value name"):
        ftuner_mlir.compile("func.func @f(%a: tensor<?xf32>) -> tensor<?xf32> {\n"
                            "  %0 = arith.addf %a, %nope : tensor<?xf32>\n  return %0 : tensor<?xf32>\n}")


def test_result_size_not_derivable():
    """A result size read from tensor data does not follow from the argument shapes: refused at compile
    time, rather than allocating a wrong-sized output at run time."""
    src = """
func.func @f(%a: tensor<?xf32>, %n: tensor<1xi64>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %v = tensor.extract %n[%c0] : tensor<1xi64>
  %size = arith.index_cast %v : i64 to index
  %e = tensor.empty(%size) : tensor<?xf32>
  return %e : tensor<?xf32>
}"""
    with pytest.raises(CompileError, match="cannot tell the size of dim 0 of result #0 of @f"):
        ftuner_mlir.compile(src)


def test_collapsed_result_size_is_the_product(rng):
    src = """
func.func @f(%a: tensor<?x?xf32>) -> tensor<?xf32> {
  %r = tensor.collapse_shape %a [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  return %r : tensor<?xf32>
}"""
    exe = ftuner_mlir.compile(src)
    for shape in ((3, 7), (1, 1), (13, 1)):
        a = rng.standard_normal(shape).astype(np.float32)
        np.testing.assert_array_equal(exe(a), a.reshape(-1))


def test_no_public_function():
    with pytest.raises(CompileError, match="no public func.func"):
        ftuner_mlir.compile("func.func private @f() { return }")


def test_unknown_target():
    with pytest.raises(ValueError, match="unknown target 'pdp11'"):
        ftuner_mlir.compile(models.matmul(), target="pdp11")
