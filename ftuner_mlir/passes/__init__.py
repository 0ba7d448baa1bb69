"""The ftuner passes, one per module, registered by their flag name."""
from .base import ModulePass, PassFailure
from .cpu_pipeline import CpuPipeline
from .lower_cpu import LowerCpu
from .select_ukernels import SelectUKernels
from .tile import Tile

REGISTRY: dict[str, type[ModulePass]] = {cls.name: cls for cls in (SelectUKernels, Tile, LowerCpu, CpuPipeline)}

__all__ = ["REGISTRY", "ModulePass", "PassFailure", "SelectUKernels", "Tile", "LowerCpu", "CpuPipeline"]
