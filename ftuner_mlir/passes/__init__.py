"""The ftuner passes, one per module, registered by their flag name."""
from ..ir.diagnostics import PassFailure
from .base import ModulePass
from .bufferize import Bufferize
from .cpu_pipeline import CpuPipeline
from .gpu_pipeline import GpuPipeline
from .lower_cpu import LowerCpu
from .lower_gpu import LowerGpu
from .select_ukernels import SelectUKernels
from .tile import Tile
from .cpu import PASSES as CPU_PASSES
from .cpu import VectorizeUKernels

REGISTRY: dict[str, type[ModulePass]] = {cls.name: cls for cls in (SelectUKernels, Tile, LowerCpu, CpuPipeline, *CPU_PASSES,
                                                              Bufferize, LowerGpu, GpuPipeline)}

__all__ = ["REGISTRY", "ModulePass", "PassFailure", "SelectUKernels", "Tile", "VectorizeUKernels", "LowerCpu", "CpuPipeline", "Bufferize", "LowerGpu", "GpuPipeline"]
