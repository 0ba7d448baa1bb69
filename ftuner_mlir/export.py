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

from pathlib import Path

from .backends import backend_for
from .hardware.targets import parse_target


def export(source: str, target: str, out_dir, name: str = "model", **options) -> Path:
    """Write the folder described above; `options` are compile()'s (num_threads, opt_level, ...)."""
    target = parse_target(target)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return backend_for(target).export(source, target, out, name, options)
