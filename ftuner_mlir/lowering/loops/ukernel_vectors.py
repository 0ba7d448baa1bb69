"""The static uKernel functions as vector code (lowering/scripts/vectorize_ukernels.mlir says how)."""
from __future__ import annotations

from ..transform import run_script


def vectorize_ukernels(module_op) -> None:
    run_script("vectorize_ukernels", module_op)
