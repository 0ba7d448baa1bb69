"""`ftuner export`: a module compiled ahead of time for a GPU, as a self-contained folder:

  lib<name>.so              host code with the PTX embedded (loaded by the CUDA driver at first call)
  libmlir_cuda_runtime.so   the MLIR CUDA wrapper library it calls (from the wheel, ~44 KB)
  libLLVM.so                an empty stub: the wrapper names libLLVM.so as a dependency but uses none
                            of its symbols, and a GPU machine need not have LLVM installed
  module.json               the functions' shape rules, the target and the uKernel sets
  ftuner_export/            the loader (standard library; torch optional), see runtime/loader.py
"""
from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from mlir import ir

from . import driver
from .hardware.cpu import parse_target
from .passes import Bufferize, LowerGpu, SelectUKernels, Tile
from .runtime import libs
from .runtime.signature import analyze

LOADER_FILES = {"loader.py": "__init__.py", "shape_rules.py": "shape_rules.py", "descriptors.py": "descriptors.py"}


class ExportError(Exception):
    """A step failed; the message names the command and carries its output."""


def _run(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise ExportError(f"{Path(cmd[0]).name} failed (exit {proc.returncode}); reproduce with:\n  "
                          f"{' '.join(cmd)}\n{proc.stderr.strip()}")


def export(source: str, target: str, out_dir, name: str = "model") -> Path:
    target = parse_target(target)
    if target.kind != "gpu":
        raise ValueError("ftuner export builds GPU modules: pass --target=cuda:<gpu>")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with ir.Context():
        module = ir.Module.parse(source)
        select = SelectUKernels(target=target)
        driver.run_pipeline(module, [select])
        rules = {n: sig.rules() for n, sig in analyze(module.operation).items()}
        driver.run_pipeline(module, [Bufferize(target=target), Tile(target=target), LowerGpu(target=target)])
        llvm_dialect = str(module)
    library = f"lib{name}.so"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "host.mlir").write_text(llvm_dialect)
        _run([libs.tool("mlir-translate"), "--mlir-to-llvmir", str(tmp / "host.mlir"), "-o", str(tmp / "host.ll")])
        _run([libs.tool("llc"), "-O3", "-filetype=obj", "-relocation-model=pic", str(tmp / "host.ll"),
              "-o", str(tmp / "host.o")])
        shutil.copy(libs.mlir_lib_dir() / "libmlir_cuda_runtime.so", out)
        (tmp / "stub.c").write_text("/* intentionally empty: see ftuner_mlir/export.py */\n")
        _run(["cc", "-shared", "-fPIC", "-o", str(out / "libLLVM.so"), "-Wl,-soname,libLLVM.so", str(tmp / "stub.c")])
        _run(["cc", "-shared", "-o", str(out / library), str(tmp / "host.o"), f"-L{out}", "-lmlir_cuda_runtime",
              "-Wl,-rpath,$ORIGIN"])
    package = out / "ftuner_export"
    package.mkdir(exist_ok=True)
    here = Path(__file__).parent / "runtime"
    for src, dst in LOADER_FILES.items():
        shutil.copy(here / src, package / dst)
    (out / "module.json").write_text(json.dumps(
        {"library": library, "target": json.loads(target.to_json()), "functions": rules}, indent=1))
    return out
