"""Profile mode: compile(..., profile=True) times each op of the public functions by kind; the results
stay exact, the clocks add up, and a module without clocks says so."""
import numpy as np
import pytest

import ftuner_mlir
from ftuner_mlir import models
from ftuner_mlir.errors import InvalidOptions

from .helpers import assert_matches, poisoned, random


@pytest.fixture(scope="module", params=[True, False], ids=["isolated", "in-process"])
def profiled(request):
    return ftuner_mlir.compile(models.matmul_bias_relu(), profile=True, isolate=request.param)


def test_profiled_module_computes_the_same(profiled, rng):
    for m, n, k in [(1, 1, 1), (37, 45, 29), (300, 257, 64)]:
        a, b, bias = random(rng, (m, k)), random(rng, (k, n)), random(rng, (n,))
        result = profiled(a, b, bias, out=poisoned((m, n)))
        ref = np.maximum(a.astype(np.float64) @ b + bias, 0)
        assert_matches(result, ref, np.abs(a).astype(np.float64) @ np.abs(b) + np.abs(bias))


# relu(A) . B: the elementwise op feeds the matmul, so it stays an op of its own (a consumer would be
# fused into the dispatch as its epilogue, as matmul_bias_relu's bias and relu are)
RELU_THEN_MATMUL = """
#id = affine_map<(i, j) -> (i, j)>
func.func @relu_matmul(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %k = tensor.dim %a, %c1 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %ea = tensor.empty(%m, %k) : tensor<?x?xf32>
  %ra = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<?x?xf32>) outs(%ea : tensor<?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.maximumf %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%ra, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%init : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
"""


def test_profile_breaks_the_call_down_by_kind(profiled, rng):
    a, b, bias = random(rng, (400, 300)), random(rng, (300, 500)), random(rng, (500,))
    found = profiled.profile(a, b, bias, calls=4)
    assert found.calls == 4 and found.function == "matmul_bias_relu"
    assert found.by_kind["uKernels"] > 0
    # which op went to which kind (not which took longer: that is a timing, and this machine is shared)
    kinds = {label.split(" at ")[0]: kind for _, kind, label in found.sites}
    assert kinds == {"matmul dispatch + epilogue": "uKernels"}, kinds      # bias + relu run in the dispatch
    timed = sum(v for k, v in found.by_kind.items() if k != "glue")
    assert 0 < timed <= found.total * 1.001
    assert found.by_kind["glue"] == pytest.approx(max(found.total - timed, 0.0), abs=1e-9)
    table = found.table()
    assert "uKernels" in table and "ms per call" in table and "slowest sites" in table


def test_profile_times_elementwise_ops_apart(rng):
    exe = ftuner_mlir.compile(RELU_THEN_MATMUL, profile=True)
    a, b = random(rng, (300, 200)), random(rng, (200, 100))
    assert_matches(exe(a, b), np.maximum(a.astype(np.float64), 0) @ b, np.abs(a).astype(np.float64) @ np.abs(b))
    found = exe.profile(a, b, calls=3)
    assert found.by_kind["uKernels"] > 0 and found.by_kind["elementwise"] > 0
    labels = [label for _, _, label in found.sites]
    assert any(label.startswith("matmul dispatch at ") for label in labels), labels
    assert any(label.startswith("linalg.generic") for label in labels), labels


def test_clocks_restart_for_each_profile(profiled, rng):
    """A profile counts its own calls only: many unprofiled calls before it do not add up."""
    a, b, bias = random(rng, (200, 200)), random(rng, (200, 200)), random(rng, (200,))
    first = profiled.profile(a, b, bias, calls=2)
    for _ in range(20):
        profiled(a, b, bias)
    second = profiled.profile(a, b, bias, calls=2)
    assert second.total < 5 * first.total + 1e-3


def test_profile_needs_clocks_and_sane_calls(profiled, rng):
    plain = ftuner_mlir.compile(models.matmul_bias_relu())
    a, b, bias = random(rng, (4, 4)), random(rng, (4, 4)), random(rng, (4,))
    with pytest.raises(ValueError, match="profile=True"):
        plain.profile(a, b, bias)
    for calls in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="calls"):
            profiled.profile(a, b, bias, calls=calls)
    with pytest.raises(ValueError, match="argument"):
        profiled.profile(a, b, calls=1)            # a bad call is refused before any native code runs
    with pytest.raises(InvalidOptions, match="profile"):
        ftuner_mlir.compile(models.matmul_bias_relu(), profile="yes")
    with pytest.raises(InvalidOptions, match="CPU"):
        ftuner_mlir.compile(models.matmul_bias_relu(), target="cuda:h200", profile=True)
