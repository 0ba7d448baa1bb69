"""ftuner-vectorize-ukernels: turn each static uKernel body into vector code (transform dialect)."""
from __future__ import annotations

import dataclasses

from ..lowering import cpu
from .base import ModulePass


@dataclasses.dataclass(frozen=True)
class VectorizeUKernels(ModulePass):
    name = "ftuner-vectorize-ukernels"
    summary = ("Vectorize the static uKernel functions: reduction step 1, rows x cols vector.contract, "
               "accumulators hoisted out of the reduction loop")

    def apply(self, module_op) -> None:
        cpu.vectorize_ukernels(module_op)
