"""Where the native runtime libraries live (inside the installed wheels)."""
from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
from pathlib import Path


@functools.cache
def mlir_lib_dir() -> Path:
    """Found without importing the bindings (that takes a tenth of a second)."""
    spec = importlib.util.find_spec("mlir._mlir_libs")
    if spec is None or spec.origin is None:
        raise RuntimeError("the MLIR Python bindings are not installed (pip install xtc-mlir-python-bindings)")
    return Path(spec.origin).resolve().parent.parent / "lib"


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


def runtime_libraries(names) -> dict[str, str]:
    """Paths of the runtime libraries named in a module manifest's `needs`."""
    found = {"libmlir_c_runner_utils.so": c_runner_utils, "libiomp5.so": openmp_runtime}
    unknown = set(names) - found.keys()
    if unknown:
        raise RuntimeError(f"compiled module needs unknown runtime libraries {sorted(unknown)}")
    return {name: found[name]() for name in names}
