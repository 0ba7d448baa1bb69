"""One OpenMP runtime for torch and the compiled code.

torch's CPU build calls libgomp (GOMP_*); the compiled code calls the LLVM OpenMP API (__kmpc_*), served
by libiomp5, which implements both. Two runtimes in one process each keep a spinning thread pool and
fight for the cores: measured on 2 cores (Xeon, emeraldrapids), a 1024x768x768 matmul of ours ran
1.67-1.82x slower right after a torch op, torch's 1.04-1.09x slower after ours. Loaded into the global
namespace before torch, libiomp5 answers torch's GOMP_* calls too: 0.98-1.03x both ways
(`ftuner bench-coexist`, docs/bench/coexist-intel-2026-12-01.txt).
"""
from __future__ import annotations

import ctypes
import sys
import warnings

from .. import settings
from ..runtime import libs

shared = False      # whether torch and the compiled code share libiomp5 in this process


def share_runtime() -> None:
    """Call before torch is imported; later, two runtimes stay (a RuntimeWarning says so)."""
    global shared
    if "torch" in sys.modules:
        warnings.warn("torch was imported before ftuner_mlir.torch: torch keeps its own OpenMP runtime beside "
                      "the compiled code's, and each slows the other when they alternate; import "
                      "ftuner_mlir.torch first to share one (see `ftuner bench-coexist`)", RuntimeWarning,
                      stacklevel=3)
        return
    settings.configure_openmp()
    ctypes.CDLL(libs.openmp_runtime(), mode=ctypes.RTLD_GLOBAL)
    shared = True
