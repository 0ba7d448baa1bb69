"""GPU lowering stages: the ops left outside uKernels become simple GPU kernels, then the upstream NVVM
pipeline lowers host and device code, with PTX (or a cubin) embedded in a gpu.binary."""
from __future__ import annotations

from ..hardware.gpu import GpuTarget

# Elementwise ops and fills (not uKernel ops) on buffers: parallel loops tiled 16 x 16 and mapped to
# blocks and threads (`no-min-max-bounds` keeps tile sizes static; bounds become guards).
MAP_REMAINING_OPS = [
    "func.func(convert-linalg-to-parallel-loops)",
    "func.func(scf-parallel-loop-tiling{parallel-loop-tile-sizes=16,16 no-min-max-bounds=true})",
    "func.func(gpu-map-parallel-loops)",
    "func.func(convert-parallel-loops-to-gpu)",
    "gpu-kernel-outlining",
    "inline", "symbol-dce", "canonicalize", "cse",
]


def nvvm_pipeline(target: GpuTarget, binary_format: str, opt_level: int) -> list[str]:
    """Chip and PTX version come from the target: sm_90 without +ptx80 aborts LLVM."""
    return [f"gpu-lower-to-nvvm-pipeline{{cubin-chip={target.chip} cubin-features={target.ptx_features} "
            f"cubin-format={binary_format} opt-level={opt_level}}}"]
