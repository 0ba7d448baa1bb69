"""Where the native runtime libraries live (inside the installed wheels)."""
from __future__ import annotations

import functools
import importlib.metadata
from pathlib import Path


@functools.cache
def mlir_lib_dir() -> Path:
    import mlir._mlir_libs
    return Path(mlir._mlir_libs.__file__).resolve().parent.parent / "lib"


def c_runner_utils() -> str:
    return str(mlir_lib_dir() / "libmlir_c_runner_utils.so")


@functools.cache
def openmp_runtime() -> str:
    """libiomp5 from the intel-openmp wheel: an LLVM-compatible OpenMP runtime (the __kmpc_* API).
    The system libgomp lacks that API."""
    try:
        files = importlib.metadata.files("intel-openmp") or []
    except importlib.metadata.PackageNotFoundError:
        files = []
    for f in files:
        if f.name == "libiomp5.so":
            return str(Path(f.locate()).resolve())
    raise RuntimeError("multi-threaded code needs libiomp5.so from the 'intel-openmp' package "
                       "(pip install intel-openmp), or compile with num_threads=1")


def tool(name: str) -> str:
    """Path of an LLVM/MLIR command-line tool shipped in the wheels (mlir-opt, FileCheck, ...)."""
    root = mlir_lib_dir().parent.parent
    for sub in ("mlir/bin", "llvm/bin"):
        path = root / sub / name
        if path.exists():
            return str(path)
    raise FileNotFoundError(f"{name} not found under {root}/{{mlir,llvm}}/bin")
