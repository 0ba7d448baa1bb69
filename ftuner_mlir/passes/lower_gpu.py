"""ftuner-lower-gpu: map the remaining ops to GPU kernels, lower host and device code through NVVM to PTX."""
from __future__ import annotations

import dataclasses

from ..lowering import gpu
from ..ir.diagnostics import PassFailure, location_of
from ..ir.walk import functions, walk
from .base import ModulePass, option

FORMATS = ("isa", "bin", "fatbin")


@dataclasses.dataclass(frozen=True)
class LowerGpu(ModulePass):
    name = "ftuner-lower-gpu"
    summary = "Map leftover ops to GPU kernels, lower to NVVM; PTX (isa) or a cubin embedded in gpu.binary"
    format: str = option("isa", "gpu.binary payload: isa (PTX text), bin (cubin, needs ptxas), fatbin",
                         choices=FORMATS)
    opt_level: int = option(3, "LLVM optimization level for the device code", minimum=0, maximum=3)

    def steps(self) -> list:
        target = self.resolved_target()
        if target.kind != "gpu":
            raise ValueError(f"{self.name} needs a GPU target (--target=cuda:...)")
        return [self._reject_host_buffers, ",".join(gpu.MAP_REMAINING_OPS + gpu.nvvm_pipeline(
            target, self.format, self.opt_level))]

    @staticmethod
    def _reject_host_buffers(module_op) -> None:
        """A buffer allocated by host code would live in host memory, out of the kernels' reach."""
        for fn in functions(module_op):
            for op in walk(fn):
                if op.operation.name in ("memref.alloc", "memref.alloca"):
                    raise PassFailure(location_of(op), "the GPU path does not support intermediate buffers yet: "
                                                       "every tensor must be an argument or a result of the "
                                                       "public function")
