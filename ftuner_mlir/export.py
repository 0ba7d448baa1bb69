"""`ftuner export`: a module compiled ahead of time, as a self-contained folder.

For a CPU target (`host`, `x86-avx512`, `x86-avx2`, a JSON file):

  lib<name>.so              the module, compiled for the target's CPU (as compile() builds it)
  libiomp5.so               the OpenMP runtime it calls (multi-threaded modules only)
  module.json               the functions' shape rules, the target and the uKernel sets
  ftuner_export/            the loader (standard library + numpy), see runtime/loader.py

For a GPU target (`cuda:<gpu>`):

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
import tempfile
from pathlib import Path

from .backends.cpu.toolchain import run_tool
from .backends.lower import lower
from .errors import CompileError
from .hardware.targets import parse_target
from .runtime import libs

LOADER_FILES = {"loader.py": "__init__.py", "shape_rules.py": "shape_rules.py", "descriptors.py": "descriptors.py",
                "function.py": "function.py", "memref.py": "memref.py"}


def export(source: str, target: str, out_dir, name: str = "model", **options) -> Path:
    """Write the folder described above; `options` are compile()'s (num_threads, opt_level, ...)."""
    target = parse_target(target)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if target.kind == "cpu":
        return _export_cpu(source, target, out, name, options)
    return _export_gpu(source, target, out, name)


def _copy_loader(out: Path) -> None:
    package = out / "ftuner_export"
    package.mkdir(exist_ok=True)
    here = Path(__file__).parent / "runtime"
    for src, dst in LOADER_FILES.items():
        shutil.copy(here / src, package / dst)


def _export_cpu(source: str, target, out: Path, name: str, options: dict) -> Path:
    from .compiler import build_folder_for_export

    library = f"lib{name}.so"
    with build_folder_for_export(source, target, **options) as (folder, _):
        manifest = json.loads((folder / "module.json").read_text())
        shutil.copy(folder / manifest["library"], out / library)
    if "libmlir_c_runner_utils.so" in manifest["needs"]:
        # it depends on libMLIR and libLLVM (hundreds of MB): not something to ship
        raise CompileError("this module calls MLIR's runtime helpers (a strided memref copy), which an export "
                           "cannot ship yet; compile() runs it in a process with the MLIR wheels installed")
    for needed, path in libs.runtime_libraries(manifest["needs"]).items():
        shutil.copy(path, out / needed)
    manifest["library"] = library
    (out / "module.json").write_text(json.dumps(manifest, indent=1))
    _copy_loader(out)
    return out


def _export_gpu(source: str, target, out: Path, name: str) -> Path:
    from mlir import ir

    from .passes import Bufferize, LowerGpu, SelectUKernels, Tile

    module, signatures = lower(source, ir.Context(), SelectUKernels(target=target),
                               [Bufferize(target=target), Tile(target=target), LowerGpu(target=target)])
    rules = {n: sig.rules() for n, sig in signatures.items()}
    llvm_dialect = str(module)
    library = f"lib{name}.so"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "host.mlir").write_text(llvm_dialect)
        run_tool([libs.tool("mlir-translate"), "--mlir-to-llvmir", str(tmp / "host.mlir"), "-o", str(tmp / "host.ll")])
        run_tool([libs.tool("llc"), "-O3", "-filetype=obj", "-relocation-model=pic", str(tmp / "host.ll"),
              "-o", str(tmp / "host.o")])
        shutil.copy(libs.mlir_lib_dir() / "libmlir_cuda_runtime.so", out)
        (tmp / "stub.c").write_text("/* intentionally empty: see ftuner_mlir/export.py */\n")
        run_tool(["cc", "-shared", "-fPIC", "-o", str(out / "libLLVM.so"), "-Wl,-soname,libLLVM.so", str(tmp / "stub.c")])
        run_tool(["cc", "-shared", "-o", str(out / library), str(tmp / "host.o"), f"-L{out}", "-lmlir_cuda_runtime",
              "-Wl,-rpath,$ORIGIN"])
    _copy_loader(out)
    (out / "module.json").write_text(json.dumps(
        {"kind": "gpu", "library": library, "target": json.loads(target.to_json()), "functions": rules}, indent=1))
    return out
