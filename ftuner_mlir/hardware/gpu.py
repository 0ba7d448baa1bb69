"""GPU hardware model: NVIDIA presets from public spec sheets (plain Python, no MLIR).

Units: counts are per device or per SM as named; memory sizes in bytes; bandwidth in GB/s (10^9
bytes/s); fp32 peak in GFLOP/s without tensor cores. Values are the boost-clock numbers of the CUDA
programming guide's compute-capability tables and the vendors' product briefs.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path

from .json_file import read_json_object


GPU_TEXT_FIELDS = {"name": r"[^\x00-\x1f]{1,128}", "chip": r"sm_\d{2,3}a?", "ptx_features": r"(\+ptx\d{2,3})?"}
# What NVIDIA parts have (with room to grow); the code generator relies on warps of 32 threads.
GPU_PHYSICAL_RANGES = {
    "sms": (1, 1024), "sub_partitions": (1, 8), "warp_size": (32, 32), "max_threads_per_block": (32, 4096),
    "max_threads_per_sm": (32, 8192), "registers_per_sm": (1024, 1 << 20), "max_registers_per_thread": (16, 1024),
    "shared_bytes_per_block": (1 << 10, 16 << 20), "shared_bytes_per_sm": (1 << 10, 16 << 20),
    "transaction_bytes": (4, 1024), "shared_banks": (1, 128), "dram_gbs": (1.0, 1e6), "fp32_gflops": (1.0, 1e7),
}


@dataclasses.dataclass(frozen=True)
class GpuTarget:
    name: str
    chip: str                          # sm_XX, the PTX target
    ptx_features: str                  # PTX ISA the chip needs (sm_90 aborts LLVM without +ptx80)
    sms: int                           # streaming multiprocessors
    sub_partitions: int                # warp schedulers per SM
    warp_size: int
    max_threads_per_block: int
    max_threads_per_sm: int
    registers_per_sm: int              # 32-bit registers
    max_registers_per_thread: int
    shared_bytes_per_block: int        # usable (opt-in) shared memory per block
    shared_bytes_per_sm: int
    transaction_bytes: int             # global memory transaction (sector) size
    shared_banks: int                  # 4-byte banks
    dram_gbs: float                    # DRAM bandwidth
    fp32_gflops: float                 # fp32 FMA peak (no tensor cores)

    kind = "gpu"

    def __post_init__(self):
        for field, pattern in GPU_TEXT_FIELDS.items():
            value = getattr(self, field)
            if not isinstance(value, str) or not re.fullmatch(pattern, value):
                raise ValueError(f"GPU target field {field} must match {pattern!r}, got {value!r}")
        for field, (lo, hi) in GPU_PHYSICAL_RANGES.items():
            value = getattr(self, field)
            kinds = (int, float) if isinstance(lo, float) else (int,)
            if not isinstance(value, kinds) or isinstance(value, bool):
                raise ValueError(f"GPU target field {field} must be a number, got {value!r}" if len(kinds) > 1 else
                                 f"GPU target field {field} must be an integer, got {value!r}")
            if not lo <= value <= hi:
                raise ValueError(f"GPU target field {field} = {value} is outside the physical range [{lo}, {hi}]")

    @property
    def compute_capability(self) -> int:
        return int(self.chip[3:])

    def describe(self) -> str:
        return (f"{self.name} ({self.chip}): {self.sms} SMs x {self.sub_partitions} sub-partitions, "
                f"{self.shared_bytes_per_block // 1024} KiB shared/block, {self.registers_per_sm} registers/SM, "
                f"{self.dram_gbs:.0f} GB/s, {self.fp32_gflops / 1000:.1f} TFLOP/s fp32")

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=2)


def _gpu(name, chip, ptx, sms, max_threads_sm, shared_block, shared_sm, dram, fp32):
    return GpuTarget(name, chip, ptx, sms, 4, 32, 1024, max_threads_sm, 65536, 255, shared_block, shared_sm,
                     32, 32, dram, fp32)


GPU_PRESETS = {
    "v100": _gpu("v100", "sm_70", "+ptx60", 80, 2048, 96 << 10, 96 << 10, 900.0, 15_700.0),
    "a100": _gpu("a100", "sm_80", "+ptx70", 108, 2048, 163 << 10, 164 << 10, 2039.0, 19_500.0),
    "rtx3090": _gpu("rtx3090", "sm_86", "+ptx71", 82, 1536, 99 << 10, 100 << 10, 936.0, 35_600.0),
    "rtx4090": _gpu("rtx4090", "sm_89", "+ptx78", 128, 1536, 99 << 10, 100 << 10, 1008.0, 82_600.0),
    "h100": _gpu("h100", "sm_90", "+ptx80", 132, 2048, 227 << 10, 228 << 10, 3350.0, 67_000.0),
    "h200": _gpu("h200", "sm_90", "+ptx80", 132, 2048, 227 << 10, 228 << 10, 4800.0, 67_000.0),
}
_BY_CHIP = {"sm_70": "v100", "sm_80": "a100", "sm_86": "rtx3090", "sm_89": "rtx4090", "sm_90": "h100"}


def parse_gpu_target(spec: str) -> GpuTarget:
    """`cuda:h200`, `cuda:sm_90` (the first preset of that chip), or `cuda:file.json` (preset fields,
    any subset over the preset named by its `chip`, default sm_90)."""
    body = spec.split(":", 1)[1] if spec.startswith("cuda:") else spec
    if body in GPU_PRESETS:
        return GPU_PRESETS[body]
    if body in _BY_CHIP:
        return GPU_PRESETS[_BY_CHIP[body]]
    if body.endswith(".json") or os.path.exists(body):
        data = read_json_object(body, "GPU target")
        chip = data.get("chip", "sm_90")
        base = dataclasses.asdict(GPU_PRESETS[_BY_CHIP.get(chip if isinstance(chip, str) else "", "h100")])
        unknown = set(data) - set(base)
        if unknown:
            raise ValueError(f"GPU target file {body}: unknown fields {sorted(unknown)}")
        base.update(data)
        base["name"] = data.get("name", Path(body).stem)
        return GpuTarget(**base)
    raise ValueError(f"unknown GPU target {spec!r}; expected cuda:<{'|'.join(GPU_PRESETS)}>, "
                     f"cuda:<{'|'.join(_BY_CHIP)}> or cuda:<file.json>")
