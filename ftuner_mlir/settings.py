"""Every environment setting the project reads, in one place.

FTUNER_CACHE_DIR   where the tuning database and the compiled-module cache live (default:
                   $XDG_CACHE_HOME/ftuner-mlir, or ~/.cache/ftuner-mlir)
FTUNER_NO_CACHE    set to 1 to neither read nor write compiled modules on disk (compile(cache=...)
                   overrides it per call)
FTUNER_NO_TUNING   set to 1 to ignore tuning measurements and use the analytic scores only
FTUNER_TORCH_VERBOSE  set to 1 to see the whole output of torch-mlir's import (the PyTorch front end)
                   when it refuses a model (the error names the op; this adds the traceback)
FTUNER_RETURN_MEMORY  set to 1 to keep glibc's malloc defaults: freed intermediates then go back to
                   the kernel after each call (runtime/allocator.py; by default they are kept for reuse)
KMP_BLOCKTIME      read by the OpenMP runtime (libiomp5): how long idle worker threads spin, in ms.
                   Default here 1 (the runtime's own is 200), so the workers do not steal the cores
                   from other thread pools (numpy's OpenBLAS) between calls; set it to override.
"""
from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    if os.environ.get("FTUNER_CACHE_DIR"):
        return Path(os.environ["FTUNER_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ftuner-mlir"


def _flag(name: str) -> bool:
    return os.environ.get(name, "0").strip().lower() in ("1", "true", "yes")


def module_cache_enabled() -> bool:
    return not _flag("FTUNER_NO_CACHE")


def tuning_enabled() -> bool:
    return not _flag("FTUNER_NO_TUNING")


def torch_verbose() -> bool:
    return _flag("FTUNER_TORCH_VERBOSE")


def return_memory() -> bool:
    return _flag("FTUNER_RETURN_MEMORY")


def configure_openmp() -> None:
    """Call before the OpenMP runtime is loaded (it reads its environment once)."""
    os.environ.setdefault("KMP_BLOCKTIME", "1")
