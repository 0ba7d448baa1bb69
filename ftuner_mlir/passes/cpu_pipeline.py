"""ftuner-cpu-pipeline: select, tile, lower-cpu in order. The one place the CPU pipeline is written:
compile(), `ftuner export` and ftuner-opt all run these stages."""
from __future__ import annotations

import dataclasses

from .base import MAX_FORCED_COLUMNS, MAX_FORCED_ROWS, MAX_THREADS, ModulePass, option


@dataclasses.dataclass(frozen=True)
class CpuPipeline(ModulePass):
    name = "ftuner-cpu-pipeline"
    summary = "ftuner-select-ukernels, ftuner-tile, ftuner-lower-cpu: dynamic-shape linalg to the LLVM dialect"
    num_threads: int = option(0, "as ftuner-lower-cpu", minimum=0, maximum=MAX_THREADS)
    mr: int = option(0, "as ftuner-select-ukernels", minimum=0, maximum=MAX_FORCED_ROWS)
    nr: int = option(0, "as ftuner-select-ukernels", minimum=0, maximum=MAX_FORCED_COLUMNS)
    tuning: bool = option(True, "as ftuner-select-ukernels")
    profile: bool = option(False, "as ftuner-lower-cpu")
    matmul_precision: str = option("f32", "as ftuner-select-ukernels", choices=("f32", "bf16"))

    def stages(self) -> list[ModulePass]:
        # Imported here: building this pass checks compile()'s options without loading MLIR (warm start).
        from .lower_cpu import LowerCpu
        from .select_ukernels import SelectUKernels
        from .tile import Tile

        return [SelectUKernels(target=self.target, mr=self.mr, nr=self.nr, tuning=self.tuning,
                               matmul_precision=self.matmul_precision),
                Tile(target=self.target),
                LowerCpu(target=self.target, num_threads=self.num_threads, profile=self.profile)]

    def passes(self) -> list:
        return [p for stage in self.stages() for p in stage.passes()]
