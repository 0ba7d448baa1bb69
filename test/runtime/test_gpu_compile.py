"""compile() for a GPU target on a machine without one: the MLIR pipeline and PTX generation run in a
child process with limits (like CPU modules), the lowered host code is cached, and, against a stand-in
driver that records launches, the JIT'd host code launches the kernels the runtime dims call for."""
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ftuner_mlir
from ftuner_mlir import models
from ftuner_mlir.errors import CompileError

DIAGNOSTICS = os.path.join(os.path.dirname(__file__), "..", "diagnostics")

COMPILE_AND_CALL = """
import ctypes, json, sys
import ftuner_mlir
from ftuner_mlir import models
from ftuner_mlir.runtime.loader import DeviceArray
exe = ftuner_mlir.compile(models.dense(), target="cuda:h200")
exe(DeviceArray(0x10000, (1232, 768)), DeviceArray(0x20000, (2304, 768)), out=DeviceArray(0x30000, (1232, 2304)))
cuda = ctypes.CDLL("libcuda.so.1")
count = ctypes.c_int.in_dll(cuda, "stub_count").value
dims = (ctypes.c_uint * 6 * 64).in_dll(cuda, "stub_dims")
names = (ctypes.c_char_p * 64).in_dll(cuda, "stub_names")
print(json.dumps([exe.origin, ftuner_mlir.compiler.compilations,
                  [[names[i].decode(), list(dims[i])] for i in range(count)]]))
"""


def _in_fresh_process(script: str, fake_driver, cache_dir) -> list:
    env = dict(os.environ, LD_LIBRARY_PATH=str(fake_driver), FTUNER_CACHE_DIR=str(cache_dir))
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_gpu_module_is_built_by_a_child_then_loaded_from_the_cache(fake_driver, tmp_path):
    # T = 77: M = 1232 = 9 full 128-row tiles + 80 rows; N = 2304 = 18 tiles exactly.
    kernels = [["body", [18, 9, 1, 256, 1, 1]], ["edge", [72, 3, 1, 256, 1, 1]]]
    origin, compilations, launches = _in_fresh_process(COMPILE_AND_CALL, fake_driver, tmp_path)
    assert (origin, compilations) == ("built", 1)
    assert [launch for launch in launches if launch[0] in ("body", "edge")] == kernels
    origin, compilations, launches = _in_fresh_process(COMPILE_AND_CALL, fake_driver, tmp_path)
    assert (origin, compilations) == ("cache", 0)
    assert [launch for launch in launches if launch[0] in ("body", "edge")] == kernels


def test_gpu_lowering_runs_under_the_time_limit_and_leaves_a_reproducer(monkeypatch):
    monkeypatch.setattr("ftuner_mlir.runtime.loader.check_driver", lambda: None)
    source = models.batch_matmul() + "\n// time-limit test\n"
    start = time.monotonic()
    with pytest.raises(CompileError, match="exceeded the time limit of 0.05 s") as err:
        ftuner_mlir.compile(source, target="cuda:h200", timeout_s=0.05)
    assert time.monotonic() - start < 20
    command = shlex.split(str(err.value).split("reproduce with:\n", 1)[1])
    assert command[0] == "ftuner-opt" and command[1].startswith("--target=cuda:") and "ftuner-lower-gpu" in command[2]
    replay = subprocess.run([str(Path(sys.executable).parent / "ftuner-opt"), *command[1:]], capture_output=True,
                            text=True, timeout=300)
    assert replay.returncode == 0, replay.stderr
    assert "gpu.binary" in replay.stdout and ".target sm_90" in replay.stdout


def test_gpu_compile_error_keeps_its_location(monkeypatch):
    monkeypatch.setattr("ftuner_mlir.runtime.loader.check_driver", lambda: None)
    with open(os.path.join(DIAGNOSTICS, "gpu-intermediate-buffer.mlir")) as f:
        source = f.read()
    with pytest.raises(CompileError, match=r"7:\d+: error: the GPU path does not support intermediate buffers"):
        ftuner_mlir.compile(source, target="cuda:h200")


def test_compile_for_gpu_without_driver_fails_before_compiling():
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="libcuda.so.1"):
        ftuner_mlir.compile(models.matmul(), target="cuda:a100")
    assert time.monotonic() - start < 1.0


def test_gpu_options_are_checked():
    with pytest.raises(ValueError, match="opt_level"):
        ftuner_mlir.compile(models.matmul(), target="cuda:a100", opt_level=9)
    with pytest.raises(ValueError, match="timeout_s and memory_mb must be positive"):
        ftuner_mlir.backends.isolate.build_isolated("", ftuner_mlir.backends.gpu.options.GpuOptions(
            ftuner_mlir.hardware.targets.parse_target("cuda:a100")), None, timeout_s=0)
