"""ftuner-gpu-pipeline: select, bufferize, tile, lower-gpu in order. The one place the GPU pipeline is
written: compile(), `ftuner export` and ftuner-opt all run these stages."""
from __future__ import annotations

import dataclasses

from .base import ModulePass, option
from .bufferize import Bufferize
from .lower_gpu import FORMATS, LowerGpu
from .select_ukernels import SelectUKernels
from .tile import Tile


@dataclasses.dataclass(frozen=True)
class GpuPipeline(ModulePass):
    name = "ftuner-gpu-pipeline"
    summary = ("ftuner-select-ukernels, ftuner-bufferize, ftuner-tile, ftuner-lower-gpu: dynamic-shape linalg to "
               "host code plus PTX (needs --target=cuda:...)")
    format: str = option("isa", "as ftuner-lower-gpu", choices=FORMATS)

    def stages(self) -> list[ModulePass]:
        return [SelectUKernels(target=self.target), Bufferize(target=self.target), Tile(target=self.target),
                LowerGpu(target=self.target, format=self.format)]

    def passes(self) -> list:
        return [p for stage in self.stages() for p in stage.passes()]
