"""The ftuner passes, one per module, registered by their flag name."""
from .base import ModulePass, PassFailure
from .cpu_pipeline import CpuPipeline
from .lower_cpu import LowerCpu
from .select_ukernels import SelectUKernels
from .tile import Tile
from .vectorize_ukernels import VectorizeUKernels

REGISTRY: dict[str, type[ModulePass]] = {cls.name: cls for cls in (SelectUKernels, Tile, VectorizeUKernels, LowerCpu,
                                                              CpuPipeline)}

__all__ = ["REGISTRY", "ModulePass", "PassFailure", "SelectUKernels", "Tile", "VectorizeUKernels", "LowerCpu", "CpuPipeline"]
