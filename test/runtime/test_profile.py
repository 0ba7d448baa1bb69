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


def test_profile_breaks_the_call_down_by_kind(profiled, rng):
    a, b, bias = random(rng, (400, 300)), random(rng, (300, 500)), random(rng, (500,))
    found = profiled.profile(a, b, bias, calls=4)
    assert found.calls == 4 and found.function == "matmul_bias_relu"
    assert found.by_kind["uKernels"] > 0 and found.by_kind["elementwise"] > 0
    # which op went to which kind (not which took longer: that is a timing, and this machine is shared)
    kinds = {label.split(" at ")[0]: kind for _, kind, label in found.sites}
    assert kinds.get("matmul dispatch") == "uKernels", kinds
    assert "elementwise" in kinds.values(), kinds
    timed = sum(v for k, v in found.by_kind.items() if k != "glue")
    assert 0 < timed <= found.total * 1.001
    assert found.by_kind["glue"] == pytest.approx(max(found.total - timed, 0.0), abs=1e-9)
    labels = [label for _, _, label in found.sites]
    assert any(label.startswith("matmul dispatch at ") for label in labels), labels
    table = found.table()
    assert "uKernels" in table and "ms per call" in table and "slowest sites" in table


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
