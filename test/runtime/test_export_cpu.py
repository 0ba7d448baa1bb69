"""`ftuner export` for a CPU: the folder holds the library, the runtime libraries its symbols need and
a numpy loader, and runs in a process where neither `mlir` nor `ftuner_mlir` can be imported."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ftuner_mlir import models
from ftuner_mlir.export import export
from ftuner_mlir.freeze import freeze_arguments
from ftuner_mlir.runtime import libs

# Run in the export folder with the compiler's packages made unimportable.
CHECK = """
import sys
sys.modules["mlir"] = None; sys.modules["ftuner_mlir"] = None
sys.path.insert(0, ".")
import numpy as np
import ftuner_export
mod = ftuner_export.load(".")
rng = np.random.default_rng()
worst = 0.0
def check(fn, args, ref):
    global worst
    out = np.full(ref.shape, np.nan, np.float32)
    got = fn(*args, out=out)
    assert np.isfinite(got).all(), "unwritten output"
    worst = max(worst, float(np.abs(got - ref).max() / max(1.0, np.abs(ref).max())))
f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
w = f32(2304, 768)
for m in (1, 16, 97, 211):
    x = f32(m, 768)
    check(mod["dense"], (x, w), x.astype(np.float64) @ w.astype(np.float64).T)
for b, m, n, k in ((1, 1, 1, 1), (3, 5, 64, 17), (7, 24, 24, 64)):
    x, y = f32(b, m, k), f32(b, k, n)
    check(mod["batch_matmul"], (x, y), x.astype(np.float64) @ y.astype(np.float64))
try:
    mod["dense"](f32(4, 767), w)
    print("NO ERROR")
except ValueError as e:
    print("ValueError:", e)
print("worst", worst)
"""


@pytest.fixture(scope="module")
def source():
    return models.dense() + models.batch_matmul()


def _run_check(folder: Path) -> str:
    proc = subprocess.run([sys.executable, "-c", CHECK], cwd=folder, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_host_export_runs_without_the_compiler(tmp_path, source):
    out = export(source, "host", tmp_path, name="paper")
    names = sorted(p.name for p in out.iterdir())
    assert names == ["ftuner_export", "libiomp5.so", "libpaper.so", "module.json"]
    meta = json.loads((out / "module.json").read_text())
    assert meta["kind"] == "cpu" and meta["needs"] == ["libiomp5.so"] and set(meta["functions"]) == {
        "dense", "batch_matmul"}
    symbols = subprocess.run(["nm", "-D", str(out / "libpaper.so")], capture_output=True, text=True).stdout
    assert "T _mlir_ciface_dense" in symbols and "T _mlir_ciface_batch_matmul" in symbols
    stdout = _run_check(out)
    assert "ValueError: @dense: argument #0 dim 1 must be 768, got 767" in stdout and "NO ERROR" not in stdout
    assert float(stdout.split("worst")[1]) < 1e-5


def test_avx2_export_has_no_avx512_code(tmp_path, source):
    out = export(source, "x86-avx2", tmp_path)
    asm = subprocess.run([libs.tool("llvm-objdump"), "-d", "--no-show-raw-insn", str(out / "libmodel.so")],
                         capture_output=True, text=True, check=True).stdout
    assert "ymm" in asm, "expected 256-bit vector code"
    assert "zmm" not in asm and "{1to" not in asm, "AVX-512 instructions in an AVX2 export"
    assert float(_run_check(out).split("worst")[1]) < 1e-5     # AVX2 code runs on this AVX-512 host too


def test_single_threaded_export_needs_no_openmp(tmp_path, source):
    out = export(source, "host", tmp_path, num_threads=1)
    assert json.loads((out / "module.json").read_text())["needs"] == []
    assert not (out / "libiomp5.so").exists()
    assert float(_run_check(out).split("worst")[1]) < 1e-5


def test_export_command_reports_bad_input(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f(%a: tensor<?xf32>) -> tensor<?xf32> {\n  return %b : tensor<?xf32>\n}\n")
    proc = subprocess.run([str(Path(sys.executable).parent / "ftuner"), "export", str(bad), "-o",
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "2:10: error: use of undeclared SSA value name" in proc.stderr


CONV_CHECK = """
import sys
sys.modules["mlir"] = None; sys.modules["ftuner_mlir"] = None
sys.path.insert(0, ".")
import numpy as np
import ftuner_export
conv = ftuner_export.load(".")["conv2d"]
rng = np.random.default_rng()
w, b = rng.standard_normal((6, 3, 3, 3)).astype(np.float32), rng.standard_normal(6).astype(np.float32)
worst = 0.0
for n, h, wd in ((1, 1, 1), (2, 7, 5), (3, 16, 13)):
    x = rng.standard_normal((n, 3, h, wd)).astype(np.float32)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    ref = np.zeros((n, 6, h, wd)) + b[None, :, None, None]
    for i in range(3):
        for j in range(3):
            ref += np.einsum("nchw,fc->nfhw", xp[:, :, i:i + h, j:j + wd], w[:, :, i, j].astype(np.float64))
    worst = max(worst, float(np.abs(conv(x, w, b) - ref).max() / np.abs(ref).max()))
print("worst", worst)
"""


def test_padded_conv_exports_without_mlir_runtime_helpers(tmp_path):
    """tensor.pad is decomposed into a fill and a vectorizable copy: no call to MLIR's strided-copy
    helper (libmlir_c_runner_utils, which an export cannot ship)."""
    out = export(models.conv2d(3, 6, 3, padding=1), "host", tmp_path, num_threads=1)
    assert json.loads((out / "module.json").read_text())["needs"] == []
    proc = subprocess.run([sys.executable, "-c", CONV_CHECK], cwd=out, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert float(proc.stdout.split("worst")[1]) < 1e-5


def test_avx2_target_in_process_has_no_avx512_code(tmp_path):
    """The in-process JIT's machine is the host's; the target still decides: every function carries
    its target CPU and the extensions the target lacks switched off."""
    import ftuner_mlir
    import numpy as np
    exe = ftuner_mlir.compile(models.dense(), "x86-avx2", isolate=False)
    assert 'target_cpu = "x86-64-v3"' in exe.llvm_dialect and '"-avx512f"' in exe.llvm_dialect
    exe._keep_alive[2].dump_to_object_file(str(tmp_path / "jit.o"))
    asm = subprocess.run([libs.tool("llvm-objdump"), "-d", "--no-show-raw-insn", str(tmp_path / "jit.o")],
                         capture_output=True, text=True, check=True).stdout
    assert "ymm" in asm and "zmm" not in asm
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((37, 768)).astype(np.float32), rng.standard_normal((2304, 768)).astype(np.float32)
    ref = x.astype(np.float64) @ w.astype(np.float64).T
    assert np.abs(exe(x, w) - ref).max() / np.abs(ref).max() < 1e-5


WEIGHTS_CHECK = """
import sys
sys.modules["mlir"] = None; sys.modules["ftuner_mlir"] = None
sys.path.insert(0, ".")
import numpy as np
import ftuner_export
f = ftuner_export.load(".")["matmul"]
w = np.load("w.npy")
rng = np.random.default_rng()
worst = 0.0
for m in (1, 7, 53):
    x = rng.standard_normal((m, 96)).astype(np.float32)
    ref = x.astype(np.float64) @ w.astype(np.float64)
    out = np.full((m, 40), np.nan, np.float32)
    worst = max(worst, float(np.abs(f(x, out=out) - ref).max() / np.abs(ref).max()))
print("worst", worst)
"""


def test_weights_export_beside_the_library(tmp_path):
    """A module's large constants ship as their own file, mapped by the loader over the library's room
    for them: the library does not hold them, and the export computes with them."""
    import numpy as np
    w = np.random.default_rng().standard_normal((96, 40)).astype(np.float32)
    source = freeze_arguments(models.matmul(n=40, k=96), {1: w})
    out = export(source, "host", tmp_path, name="weighted", num_threads=1)
    meta = json.loads((out / "module.json").read_text())
    assert (out / meta["constants"]["file"]).stat().st_size == meta["constants"]["bytes"] >= w.nbytes
    assert w[0, :8].tobytes() not in (out / "libweighted.so").read_bytes()
    np.save(out / "w.npy", w)
    proc = subprocess.run([sys.executable, "-c", WEIGHTS_CHECK], cwd=out, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert float(proc.stdout.split("worst")[1]) < 1e-5
