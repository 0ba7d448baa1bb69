"""`ftuner export` on a machine without a GPU: the folder is complete and small, the host side links,
the loader checks calls, and, against a stand-in driver that records launches, the host code launches
the body and edge kernels with the grids the runtime dims call for."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ftuner_mlir import models
from ftuner_mlir.export import export

INPUTS = Path(__file__).parent / "Inputs"


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("export")
    source = models.dense() + models.batch_matmul()
    return export(source, "cuda:h200", out, name="paper")


def test_export_folder(exported):
    names = sorted(p.name for p in exported.iterdir())
    assert names == ["ftuner_export", "libLLVM.so", "libmlir_cuda_runtime.so", "libpaper.so", "module.json"]
    total = sum(p.stat().st_size for p in exported.rglob("*") if p.is_file())
    assert total < 2 << 20, f"{total} bytes"
    meta = json.loads((exported / "module.json").read_text())
    assert set(meta["functions"]) == {"dense", "batch_matmul"} and meta["target"]["chip"] == "sm_90"
    symbols = subprocess.run(["nm", "-D", str(exported / "libpaper.so")], capture_output=True, text=True).stdout
    for sym in ("T _mlir_ciface_dense", "T _mlir_ciface_batch_matmul", "U mgpuLaunchKernel", "U mgpuModuleLoadJIT"):
        assert sym in symbols
    assert b".target sm_90" in (exported / "libpaper.so").read_bytes()        # the PTX is embedded


def _run_with(exported, fake_driver, script: str) -> str:
    env = dict(os.environ, LD_LIBRARY_PATH=str(fake_driver))
    proc = subprocess.run([sys.executable, "-c", script], cwd=exported, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


LAUNCHES = """
import ctypes, json, sys
sys.path.insert(0, ".")
import ftuner_export
from ftuner_export import DeviceArray
mod = ftuner_export.load(".")
{call}
cuda = ctypes.CDLL("libcuda.so.1")
count = ctypes.c_int.in_dll(cuda, "stub_count").value
dims = (ctypes.c_uint * 6 * 64).in_dll(cuda, "stub_dims")
names = (ctypes.c_char_p * 64).in_dll(cuda, "stub_names")
print(json.dumps([[names[i].decode(), list(dims[i])] for i in range(count)]))
"""


def test_dense_launches(exported, fake_driver):
    # T = 77: M = 1232 = 9 full 128-row tiles + 80 rows; N = 2304 = 18 tiles exactly.
    call = ("mod['dense'](DeviceArray(0x10000, (1232, 768)), DeviceArray(0x20000, (2304, 768)), "
            "out=DeviceArray(0x30000, (1232, 2304)))")
    launches = json.loads(_run_with(exported, fake_driver, LAUNCHES.format(call=call)).splitlines()[-1])
    kernels = [(name, dims) for name, dims in launches if name in ("body", "edge")]
    assert kernels == [("body", [18, 9, 1, 256, 1, 1]), ("edge", [72, 3, 1, 256, 1, 1])]
    assert len(launches) == 3                     # plus the fill kernel that zeroes the output first


def test_batch_launches(exported, fake_driver):
    # [192, 100, 64] x [192, 64, 100]: no full 128x128 tile, so only edge blocks: 4 x 4 per batch.
    call = ("mod['batch_matmul'](DeviceArray(0x10000, (192, 100, 64)), DeviceArray(0x20000, (192, 64, 100)), "
            "out=DeviceArray(0x30000, (192, 100, 100)))")
    launches = json.loads(_run_with(exported, fake_driver, LAUNCHES.format(call=call)).splitlines()[-1])
    kernels = [(name, dims) for name, dims in launches if name in ("body", "edge")]
    assert kernels == [("edge", [4, 4, 192, 256, 1, 1])]


def test_loader_checks_before_launching(exported, fake_driver):
    script = LAUNCHES.format(call="""
for args, kw in [((DeviceArray(1, (16, 767)), DeviceArray(2, (2304, 768))), dict(out=DeviceArray(3, (16, 2304)))),
                 ((DeviceArray(1, (16, 768)), DeviceArray(2, (2304, 768), "float64")), dict(out=DeviceArray(3, (16, 2304)))),
                 ((DeviceArray(1, (16, 768)), DeviceArray(2, (2304, 768))), dict(out=DeviceArray(3, (16, 2303))))]:
    try:
        mod['dense'](*args, **kw)
        print("NO ERROR")
    except ValueError as e:
        print("ValueError:", e)
""")
    out = _run_with(exported, fake_driver, script)
    assert "argument #0 dim 1 must be 768, got 767" in out
    assert "argument #1 must have dtype float32, got float64" in out
    assert "out #0 must be a contiguous float32 array of shape (16, 2304)" in out
    assert "NO ERROR" not in out and out.splitlines()[-1] == "[]"          # nothing was launched


def test_no_driver_is_a_clear_error(exported):
    proc = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, '.'); import ftuner_export; "
                           "ftuner_export.load('.')"], cwd=exported, capture_output=True, text=True, timeout=60,
                          env={k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"})
    assert proc.returncode == 1 and "no CUDA driver: libcuda.so.1 cannot be loaded" in proc.stderr
