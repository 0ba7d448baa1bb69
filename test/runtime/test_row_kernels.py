"""Row kernels of several layers compiled once (lowering/buffers/row_kernels.py: outlined after
bufferization, identical ones merged) compute each layer with its own weights: three layers of a
matmul then a softmax scaled per column, against float64 numpy on poisoned outputs, with rows on both
sides of the parallel threshold (the kernel's parallel and serial branches); the compiled code holds
one function for the layers' kernels, called once per layer."""
import re

import numpy as np
import pytest
from mlir import ir

import ftuner_mlir
from ftuner_mlir.backends.cpu.options import BuildOptions
from ftuner_mlir.backends.lower import lower_cpu
from ftuner_mlir.hardware import detect_host

from .helpers import assert_matches, poisoned, random

N = 64                  # columns: 512 rows and more cross the 32768-point parallel threshold
LAYERS = 3
MAPS = """#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>"""


def _constant(values: np.ndarray) -> str:
    shape = "x".join(map(str, values.shape))
    return "dense<" + np.array2string(values, separator=", ", threshold=values.size + 1,
                                      formatter={"float_kind": lambda v: f"{v:.8e}"}) + f"> : tensor<{shape}xf32>"


def _layer(k: int, x: str) -> str:
    """A matmul (a dispatch), then a softmax over each row scaled per column: the row kernel."""
    return f"""
  %w{k} = arith.constant {_constant(WEIGHTS[k][0])}
  %g{k} = arith.constant {_constant(WEIGHTS[k][1])}
  %f{k} = linalg.fill ins(%zero : f32) outs(%e : tensor<?x{N}xf32>) -> tensor<?x{N}xf32>
  %m{k} = linalg.matmul ins({x}, %w{k} : tensor<?x{N}xf32>, tensor<{N}x{N}xf32>) outs(%f{k} : tensor<?x{N}xf32>) -> tensor<?x{N}xf32>
  %s{k} = linalg.softmax dimension(1) ins(%m{k} : tensor<?x{N}xf32>) outs(%e : tensor<?x{N}xf32>) -> tensor<?x{N}xf32>
  %h{k} = linalg.generic {{indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%s{k}, %g{k} : tensor<?x{N}xf32>, tensor<{N}xf32>) outs(%e : tensor<?x{N}xf32>) {{
  ^bb0(%a: f32, %g: f32, %o: f32):
    %r = arith.mulf %a, %g : f32
    linalg.yield %r : f32
  }} -> tensor<?x{N}xf32>"""


WEIGHTS = [((np.random.default_rng(k).standard_normal((N, N)) / 8).astype(np.float32),
            (np.random.default_rng(100 + k).standard_normal(N) * 8).astype(np.float32)) for k in range(LAYERS)]
SOURCE = MAPS + f"""
func.func @layers(%x: tensor<?x{N}xf32>) -> tensor<?x{N}xf32> {{
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x{N}xf32>
  %e = tensor.empty(%n) : tensor<?x{N}xf32>""" + "".join(
    _layer(k, "%x" if k == 0 else f"%h{k - 1}") for k in range(LAYERS)) + f"""
  return %h{LAYERS - 1} : tensor<?x{N}xf32>
}}
"""


def reference(x: np.ndarray) -> np.ndarray:
    h = x.astype(np.float64)
    for w, g in WEIGHTS:
        m = h @ w
        e = np.exp(m - m.max(axis=1, keepdims=True))
        h = e / e.sum(axis=1, keepdims=True) * g
    return h


@pytest.fixture(scope="module")
def exe():
    return ftuner_mlir.compile(SOURCE)


@pytest.mark.parametrize("rows", [1, 2, 17, 511, 512, 613])
def test_each_layer_uses_its_own_weights(exe, rng, rows):
    x = random(rng, (rows, N))
    got = exe["layers"](x, out=poisoned((rows, N)))
    assert_matches(got, reference(x), np.abs(reference(x)) + 1)


def test_the_layers_share_one_kernel_function():
    module, _ = lower_cpu(SOURCE, ir.Context(), BuildOptions(target=detect_host(), num_threads=2))
    text = module.operation.get_asm(large_elements_limit=16)
    defined = set(re.findall(r"llvm\.func internal @(ftuner_kernel_\w+)\(", text))
    calls = re.findall(r"llvm\.call @(ftuner_kernel_\w+)\(", text)
    assert len(defined) == 1, defined
    assert calls == [defined.pop()] * LAYERS
