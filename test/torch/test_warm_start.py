"""The module cache is keyed by the exported program (torch/fingerprint.py): a second compile of the same
model, options and shapes, in a new process, loads the module without running torch-mlir; anything
that changes the code (a weight, a declared range, an option) misses and compiles afresh."""
import json
import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pytest

import ftuner_mlir.torch as ftorch      # before torch: one OpenMP runtime
import torch
from torch.export import Dim
from ftuner_mlir import compiler

from .models import ids, reference_f64, relative_error, tiny

TOLERANCE = 1e-4

_COMPILE = textwrap.dedent("""
    import json, sys
    import ftuner_mlir.torch as ftorch
    import torch
    from torch.export import Dim
    from ftuner_mlir import compiler
    from test.torch.models import ids, tiny
    import numpy as np
    model = tiny("bert", seed=5)
    out = ftorch.compile(model, (ids(np.random.default_rng(0), 2, 8),),
                         dynamic_shapes=({0: Dim("B", min=1, max=8), 1: Dim("T", min=1, max=64)},))
    x = ids(np.random.default_rng(1), 3, 11)
    with torch.no_grad():
        err = float((out(x) - model(x)).abs().max() / model(x).abs().max())
    print(json.dumps({"compilations": compiler.compilations, "cache_loads": compiler.cache_loads,
                      "import_s": out.timings["import_s"], "source_bytes": out.source_bytes, "err": err,
                      "mlir_loaded": "mlir" in sys.modules}))
""")


def _compile_in_a_new_process(cache_dir: str) -> dict:
    env = {**os.environ, "FTUNER_CACHE_DIR": cache_dir}
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.run([sys.executable, "-c", _COMPILE], capture_output=True, text=True, env=env, cwd=root,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_new_process_loads_the_module_without_importing():
    """...nor loading MLIR's Python package in that process (~1 s with the passes' modules)."""
    with tempfile.TemporaryDirectory(prefix="ftuner-warm-") as cache_dir:
        cold = _compile_in_a_new_process(cache_dir)
        warm = _compile_in_a_new_process(cache_dir)
    assert (cold["compilations"], cold["cache_loads"]) == (1, 0) and cold["import_s"] > 0
    assert cold["source_bytes"] > 0
    assert (warm["compilations"], warm["cache_loads"]) == (1 - 1, 1)
    assert warm["import_s"] == 0 and warm["source_bytes"] is None
    assert cold["mlir_loaded"] and not warm["mlir_loaded"]
    assert cold["err"] < TOLERANCE and warm["err"] < TOLERANCE


@pytest.fixture
def bert():
    return tiny("bert", seed=6)


def _compile(model, t_max=64, **options):
    return ftorch.compile(model, (ids(np.random.default_rng(0), 2, 8),),
                          dynamic_shapes=({1: Dim("T", min=1, max=t_max)},), **options)


def _forget_in_process_modules(monkeypatch):
    monkeypatch.setattr(compiler, "_memo", {})


def test_what_changes_the_code_changes_the_key(bert, rng, monkeypatch):
    """Same model again: a cache load; a changed weight, range or option: a compilation whose results
    follow the change (never the stale module)."""
    _compile(bert)
    _forget_in_process_modules(monkeypatch)
    loads, built = compiler.cache_loads, compiler.compilations
    again = _compile(bert, on_weight_change="ignore")     # not part of the code: a cache load
    assert (compiler.cache_loads, compiler.compilations) == (loads + 1, built)
    assert again.timings["import_s"] == 0

    with torch.no_grad():
        bert.model.encoder.layer[0].output.dense.weight[3, 5] += 0.5
    changed = _compile(bert)
    x = ids(rng, 2, 13)
    with torch.no_grad():
        assert relative_error(changed(x), reference_f64(bert)(x)) < TOLERANCE
        assert relative_error(again(x), reference_f64(bert)(x)) > 10 * TOLERANCE      # the old weights
    assert compiler.compilations == built + 1

    _compile(bert, t_max=32)
    _compile(bert, num_threads=1)
    assert compiler.compilations == built + 3


def test_compile_takes_a_callable_source_only_with_its_key():
    with pytest.raises(TypeError, match="a callable producing it with a source_key"):
        compiler.compile(lambda: "module {}")
