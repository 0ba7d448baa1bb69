"""Target specs (`--target`, `compile(target=...)`) to CpuTarget or GpuTarget values."""
from __future__ import annotations

import dataclasses
import os

from .cpu import BF16_ENGINES, PRESETS, CpuTarget, detect_host, from_json_file
from .gpu import parse_gpu_target


def parse_target(spec):
    """`host`, a CPU preset (`x86-avx2`, `x86-avx512`), a CPU JSON file, or a GPU: `cuda:h200`,
    `cuda:sm_90`, `cuda:file.json` (see hardware/gpu.py). A CPU spec may end in `,bf16_engine=E` to
    choose its bf16 engine (`host,bf16_engine=avx512_bf16` on an AMX machine: the AVX512-BF16 uKernels;
    `none`: bf16 matmuls widened to fp32)."""
    if isinstance(spec, CpuTarget) or getattr(spec, "kind", None) == "gpu":
        return spec
    if isinstance(spec, str) and spec.startswith("cuda:"):
        return parse_gpu_target(spec)
    if isinstance(spec, str) and "," in spec:
        base, _, override = spec.partition(",")
        return _with_engine(parse_target(base), override)
    if spec in (None, "", "host"):
        return detect_host()
    if spec in PRESETS:
        return PRESETS[spec]
    if spec.endswith(".json") or os.path.exists(spec):
        return from_json_file(spec)
    raise ValueError(f"unknown target {spec!r}; expected 'host', one of {sorted(PRESETS)}, a JSON file, "
                     f"or cuda:<gpu>")


def _with_engine(target: CpuTarget, override: str) -> CpuTarget:
    field, _, engine = override.partition("=")
    if field != "bf16_engine" or engine not in BF16_ENGINES:
        raise ValueError(f"unknown target option {override!r}; expected bf16_engine=<{'|'.join(BF16_ENGINES)}>")
    if engine == "avx512_bf16" and target.isa != "avx512":
        raise ValueError(f"bf16_engine=avx512_bf16 needs an avx512 target; {target.name} is {target.isa}")
    return dataclasses.replace(target, bf16_engine=engine)
