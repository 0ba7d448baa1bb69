"""compile() runs MLIR and LLVM in a child process: inputs that abort, crash or exhaust a limit there
become a CompileError with a reproducer, and the caller goes on."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ftuner_mlir
from ftuner_mlir import models
from ftuner_mlir.errors import CompileError

from .helpers import assert_matches, random

INPUTS = Path(__file__).parent / "Inputs"


def _reproducer(message: str) -> list[str]:
    """The ftuner-opt command in the message, as an argument list."""
    line = next(ln for ln in message.splitlines() if ln.strip().startswith("ftuner-opt "))
    import shlex
    return shlex.split(line)


@pytest.mark.parametrize("name, expected", [
    ("static-dim-2-pow-62.mlir", r"died of SIGABRT .*integer overflow in size computation"),
    ("complex-unlowered.mlir", r"9:10: error: 'complex.create' was not lowered to the LLVM dialect: ftuner-lower-cpu "
                               r"has no"),
])
def test_fatal_inputs_become_compile_errors(name, expected):
    source = (INPUTS / name).read_text()
    with pytest.raises(CompileError, match=f"(?s){expected}") as info:
        ftuner_mlir.compile(source, cache=False)
    message = str(info.value)
    assert "reproduce with:" in message
    cmd = _reproducer(message)
    saved = Path(cmd[-1])
    assert saved.read_text() == source and Path(cmd[1].split("=", 1)[1]).exists()
    # the reproducer replays the failure (it aborts or reports the same error), in its own process
    replay = subprocess.run([str(Path(sys.executable).parent / "ftuner-opt"), *cmd[1:]], capture_output=True,
                            text=True, timeout=300)
    assert replay.returncode != 0
    # and this process is fine: it compiles and runs a valid module afterwards
    exe = ftuner_mlir.compile(models.matmul())
    a, b = np.ones((3, 5), np.float32), np.ones((5, 2), np.float32)
    assert (exe(a, b) == 5).all()


def test_time_limit():
    source = models.matmul() + "\n// time-limit test: a text of its own, so nothing is cached\n"
    with pytest.raises(CompileError, match=r"exceeded the time limit of 0.2 s") as info:
        ftuner_mlir.compile(source, cache=False, timeout_s=0.2)
    assert "reproduce with:" in str(info.value)


def test_memory_limit():
    source = models.matmul() + "\n// memory-limit test\n"
    with pytest.raises(CompileError, match=r"ran out of memory under the limit of 150 MB"):
        ftuner_mlir.compile(source, cache=False, memory_mb=150)


@pytest.mark.parametrize("kwargs, message", [
    (dict(opt_level=7), r"opt_level must be one of \(0, 1, 2, 3\), got 7"),
    (dict(num_threads=-1), r"num_threads must be 0"),
    (dict(tile=(4, 0)), r"mr and nr must be given together"),
    (dict(timeout_s=0), r"timeout_s and memory_mb must be positive"),
])
def test_bad_options_are_refused_before_compiling(kwargs, message):
    from ftuner_mlir.errors import InvalidOptions
    with pytest.raises(InvalidOptions, match=message) as info:
        ftuner_mlir.compile(models.matmul() + f"\n// {kwargs}\n", cache=False, **kwargs)
    assert isinstance(info.value, CompileError) and isinstance(info.value, ValueError)


def test_source_must_be_text():
    with pytest.raises(TypeError, match="compile\\(\\) takes MLIR text \\(str\\), or a callable producing it with a "
                                        "source_key; got int"):
        ftuner_mlir.compile(123)


def test_in_process_mode_matches_isolated(rng):
    isolated = ftuner_mlir.compile(models.dense(), cache=False)
    jit = ftuner_mlir.compile(models.dense(), isolate=False)
    assert isolated.origin == "built" and jit.origin == "in-process"
    assert "llvm.func @dense" in jit.llvm_dialect
    w = random(rng, (2304, 768))
    for m in (1, 17, 130):
        x = random(rng, (m, 768))
        ref = x.astype(np.float64) @ w.astype(np.float64).T
        scale = np.abs(x).astype(np.float64) @ np.abs(w).astype(np.float64).T
        for exe in (isolated, jit):
            out = np.full((m, 2304), np.nan, np.float32)
            assert_matches(exe(x, w, out=out), ref, scale)


def test_boolean_masks_in_buffers_compile(rng):
    """A mask tensor of i1 (MLIR 22's memref-to-LLVM aborts on i1 loads and stores; they are stored as
    i8): the module that used to abort the compiler computes where(a > 0, a, 0)."""
    exe = ftuner_mlir.compile((INPUTS / "i1-mask-select.mlir").read_text(), cache=False)
    for n in (1, 2, 37, 1001):
        a = random(rng, (n,))
        out = np.full(n, np.nan, np.float32)
        assert np.array_equal(exe(a, out=out), np.where(a > 0, a, 0))


def test_math_ops_without_an_llvm_lowering_call_libm(rng):
    """math.erf (BERT's GELU) has no LLVM intrinsic: it becomes a libm call, on both routes."""
    import math
    source = (INPUTS / "math-erf-tanh-exp.mlir").read_text()
    for exe in (ftuner_mlir.compile(source, cache=False), ftuner_mlir.compile(source, isolate=False)):
        for n in (1, 17, 1001):
            a = random(rng, (n,))
            ref = np.exp(np.tanh(np.array([math.erf(float(v)) for v in a])))
            assert np.abs(exe(a) - ref).max() < 1e-6


def test_a_produced_text_is_built_by_the_spare_compiler(rng):
    """A source given as a callable (the torch route's import) is built by a compiler child started
    before the text existed: the same results, errors and limits as a text given outright."""
    produced = []

    def matmul():
        produced.append(True)
        return models.matmul() + "\n// produced for the spare compiler\n"
    exe = ftuner_mlir.compile(matmul, source_key="spare-compiler-test-ok", cache=False)
    a, b = rng.standard_normal((13, 7), dtype=np.float32), rng.standard_normal((7, 3), dtype=np.float32)
    assert produced and np.allclose(exe(a, b), a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)
    broken = (INPUTS / "complex-unlowered.mlir").read_text()
    with pytest.raises(CompileError, match=r"9:10: error: 'complex.create' was not lowered"):
        ftuner_mlir.compile(lambda: broken, source_key="spare-compiler-test-error", cache=False)
    with pytest.raises(CompileError, match=r"ran out of memory under the limit of 150 MB"):
        ftuner_mlir.compile(matmul, source_key="spare-compiler-test-memory", cache=False, memory_mb=150)
