"""Target specs (`--target`, `compile(target=...)`) to CpuTarget or GpuTarget values."""
from __future__ import annotations

import os

from .cpu import PRESETS, CpuTarget, detect_host, from_json_file
from .gpu import parse_gpu_target


def parse_target(spec):
    """`host`, a CPU preset (`x86-avx2`, `x86-avx512`), a CPU JSON file, or a GPU: `cuda:h200`,
    `cuda:sm_90`, `cuda:file.json` (see hardware/gpu.py)."""
    if isinstance(spec, CpuTarget) or getattr(spec, "kind", None) == "gpu":
        return spec
    if isinstance(spec, str) and spec.startswith("cuda:"):
        return parse_gpu_target(spec)
    if spec in (None, "", "host"):
        return detect_host()
    if spec in PRESETS:
        return PRESETS[spec]
    if spec.endswith(".json") or os.path.exists(spec):
        return from_json_file(spec)
    raise ValueError(f"unknown target {spec!r}; expected 'host', one of {sorted(PRESETS)}, a JSON file, "
                     f"or cuda:<gpu>")
