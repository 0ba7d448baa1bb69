"""Faults around a compile end cleanly: bad limits are refused before any child starts, an unwritable
cache is a warning and an uncached build, an unwritable temporary directory a CompileError naming it,
and a signal to the compiling process leaves no compiler process and no scratch folder behind."""
import errno
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

import ftuner_mlir
from ftuner_mlir import models
from ftuner_mlir.backends import cache as module_cache
from ftuner_mlir.errors import CompileError, InvalidOptions


@pytest.mark.parametrize("limits", [dict(memory_mb=1.5), dict(memory_mb=2 ** 60), dict(memory_mb=True),
                                    dict(memory_mb="512"), dict(timeout_s=float("inf")), dict(timeout_s="10"),
                                    dict(timeout_s=-1), dict(timeout_s=float("nan"))])
def test_limits_are_checked_before_any_child_starts(limits):
    started = time.monotonic()
    with pytest.raises(InvalidOptions, match=f"{next(iter(limits))} is a"):
        ftuner_mlir.compile(models.matmul() + f"\n// {limits}\n", cache=False, **limits)
    assert time.monotonic() - started < 2


def _check_matmul(exe, rng):
    a, b = rng.standard_normal((7, 5)).astype(np.float32), rng.standard_normal((5, 3)).astype(np.float32)
    out = np.full((7, 3), np.nan, np.float32)
    np.testing.assert_allclose(exe(a, b, out=out), a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


def test_a_cache_folder_that_cannot_be_created_is_a_warning(monkeypatch, tmp_path, rng):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("FTUNER_CACHE_DIR", str(blocker))
    with pytest.warns(RuntimeWarning, match="cannot be written.*building without it"):
        exe = ftuner_mlir.compile(models.matmul() + "\n// cache folder is a file\n")
    assert exe.origin == "built"
    _check_matmul(exe, rng)


def test_a_full_cache_is_a_warning(monkeypatch, tmp_path, rng):
    monkeypatch.setenv("FTUNER_CACHE_DIR", str(tmp_path))

    def full(*_):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(module_cache, "publish", full)
    with pytest.warns(RuntimeWarning, match="No space left on device"):
        exe = ftuner_mlir.compile(models.matmul() + "\n// full cache\n")
    _check_matmul(exe, rng)
    assert not list((tmp_path / "modules").glob("*/*/module.json"))
    assert not list((tmp_path / "modules").glob("building-*")), "the build folder was left behind"


def test_a_really_full_cache_is_a_warning(monkeypatch, full_folder, rng):
    monkeypatch.setenv("FTUNER_CACHE_DIR", str(full_folder))
    with pytest.warns(RuntimeWarning, match="cannot be written"):
        exe = ftuner_mlir.compile(models.matmul() + "\n// really full cache\n")
    _check_matmul(exe, rng)


def test_a_full_temporary_directory_is_a_compile_error(monkeypatch, full_folder):
    monkeypatch.setattr(tempfile, "tempdir", str(full_folder))
    with pytest.raises(CompileError, match=f"cannot write into {full_folder}.*No space left on device"):
        ftuner_mlir.compile(models.matmul() + "\n// full temp dir\n", cache=False)
    assert [p.name for p in full_folder.iterdir()] == ["filler"], "a build folder was left behind"


def test_an_unwritable_temporary_directory_is_a_compile_error(monkeypatch, tmp_path):
    blocker = tmp_path / "tmp-is-a-file"
    blocker.write_text("")
    monkeypatch.setattr(tempfile, "tempdir", str(blocker))
    with pytest.raises(CompileError, match=f"temporary directory {blocker}"):
        ftuner_mlir.compile(models.matmul() + "\n// no temp dir\n", cache=False)


# A module of 16 Dense functions: a compile of several seconds, long enough to be interrupted
COMPILING = """
import ftuner_mlir
from ftuner_mlir import models
ftuner_mlir.compile("".join(models.dense().replace("@dense", f"@dense{{i}}") for i in range({copies})) + "// {tag}")
"""


def _workers(cache_dir: Path) -> list[int]:
    """Compiler processes building into `cache_dir`."""
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if "backends.cpu.worker" in cmdline and str(cache_dir) in cmdline:
            pids.append(int(proc.name))
    return pids


def _wait_until(condition, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_a_signal_to_the_compiling_process_leaves_nothing_behind(tmp_path, sig):
    env = dict(os.environ, FTUNER_CACHE_DIR=str(tmp_path))
    parent = subprocess.Popen([sys.executable, "-c", COMPILING.format(tag=f"signal {sig.name}", copies=16)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert _wait_until(lambda: _workers(tmp_path), 120), "the compiler process never started"
        parent.send_signal(sig)
        parent.wait(timeout=60)
    finally:
        parent.kill()
    assert parent.returncode == -sig, parent.stderr.read()     # Python re-raises an uncaught SIGINT
    assert _wait_until(lambda: not _workers(tmp_path), 1), "a compiler process outlived its parent"
    building = list((tmp_path / "modules").glob("building-*"))
    if sig == signal.SIGKILL:           # nothing runs in a killed process: the next compile sweeps
        assert building
        subprocess.run([sys.executable, "-c", COMPILING.format(tag="after SIGKILL", copies=1)], env=env, check=True,
                       timeout=300)
        building = list((tmp_path / "modules").glob("building-*"))
    assert not building, "a scratch folder outlived its process"
