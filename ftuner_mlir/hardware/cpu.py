"""CPU hardware model: ISA level, vector registers, cache sizes, cores.

Plain Python (no MLIR). A `CpuTarget` is frozen and hashable: the same target always yields the same
uKernel selection and therefore the same IR.
"""
from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

ISA_VECTOR_BITS = {"avx512": 512, "avx2": 256, "sse": 128}
ISA_VECTOR_REGISTERS = {"avx512": 32, "avx2": 16, "sse": 16}


@dataclasses.dataclass(frozen=True)
class CpuTarget:
    """What the uKernel space needs to know about a CPU. Sizes in bytes."""

    name: str
    isa: str                  # "avx512" | "avx2" | "sse"
    vector_bits: int          # width of one SIMD register
    vector_registers: int     # architectural SIMD registers
    l1d_bytes: int            # per core
    l2_bytes: int             # per core
    l3_bytes: int             # shared
    cores: int                # cores the generated code uses

    kind = "cpu"

    def __post_init__(self):
        if self.isa not in ISA_VECTOR_BITS:
            raise ValueError(f"unknown isa {self.isa!r}; expected one of {sorted(ISA_VECTOR_BITS)}")
        for field in ("vector_bits", "vector_registers", "l1d_bytes", "l2_bytes", "l3_bytes", "cores"):
            if getattr(self, field) <= 0:
                raise ValueError(f"target field {field} must be positive, got {getattr(self, field)}")

    def lanes(self, element_bits: int) -> int:
        """Elements of `element_bits` in one vector register."""
        return self.vector_bits // element_bits

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=2)

    def describe(self) -> str:
        kib = lambda b: f"{b // 1024} KiB"
        return (f"{self.name}: {self.isa}, {self.vector_bits}-bit x {self.vector_registers} vector registers, "
                f"L1d {kib(self.l1d_bytes)}, L2 {kib(self.l2_bytes)}, L3 {kib(self.l3_bytes)}, "
                f"{self.cores} cores")


def _preset(name, isa, l1, l2, l3, cores):
    return CpuTarget(name, isa, ISA_VECTOR_BITS[isa], ISA_VECTOR_REGISTERS[isa], l1, l2, l3, cores)


PRESETS = {
    "x86-avx512": _preset("x86-avx512", "avx512", 32 << 10, 1 << 20, 32 << 20, 2),
    "x86-avx2": _preset("x86-avx2", "avx2", 32 << 10, 512 << 10, 16 << 20, 2),
}


def _cpu_flags(cpuinfo: str) -> set[str]:
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def _isa_from_flags(flags: set[str]) -> str:
    if {"avx512f", "avx512vl"} <= flags or "avx512f" in flags:
        return "avx512"
    if {"avx2", "fma"} <= flags:
        return "avx2"
    return "sse"


def _parse_size(text: str) -> int:
    text = text.strip().upper()
    for suffix, mult in (("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30)):
        if text.endswith(suffix):
            return int(text[:-1]) * mult
    return int(text)


def _cache_sizes(sysfs: Path) -> dict[tuple[int, str], int]:
    """(level, type) -> bytes, read from /sys/devices/system/cpu/cpu0/cache."""
    sizes = {}
    for index in sorted(sysfs.glob("index*")):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            sizes[(level, kind)] = _parse_size((index / "size").read_text())
        except (OSError, ValueError):
            continue
    return sizes


def detect_host(cpuinfo_path="/proc/cpuinfo", cache_dir="/sys/devices/system/cpu/cpu0/cache") -> CpuTarget:
    """The machine this process runs on; missing facts fall back to the matching preset."""
    try:
        flags = _cpu_flags(Path(cpuinfo_path).read_text())
    except OSError:
        flags = set()
    isa = _isa_from_flags(flags)
    fallback = PRESETS["x86-avx512" if isa == "avx512" else "x86-avx2"]
    caches = _cache_sizes(Path(cache_dir))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return CpuTarget(
        name="host",
        isa=isa,
        vector_bits=ISA_VECTOR_BITS[isa],
        vector_registers=ISA_VECTOR_REGISTERS[isa],
        l1d_bytes=caches.get((1, "Data"), fallback.l1d_bytes),
        l2_bytes=caches.get((2, "Unified"), fallback.l2_bytes),
        l3_bytes=caches.get((3, "Unified"), fallback.l3_bytes),
        cores=max(1, cores),
    )


def from_json_file(path: str) -> CpuTarget:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(f"cannot read target file {path}: {err}") from None
    base = dataclasses.asdict(PRESETS["x86-avx512" if data.get("isa", "avx512") == "avx512" else "x86-avx2"])
    unknown = set(data) - set(base)
    if unknown:
        raise ValueError(f"target file {path}: unknown fields {sorted(unknown)}; known: {sorted(base)}")
    isa = data.get("isa", base["isa"])
    if "isa" in data and isa in ISA_VECTOR_BITS:
        base.update(vector_bits=ISA_VECTOR_BITS[isa], vector_registers=ISA_VECTOR_REGISTERS[isa])
    base.update(data)
    base["name"] = data.get("name", Path(path).stem)
    return CpuTarget(**base)


def parse_target(spec):
    """`host`, a CPU preset (`x86-avx2`, `x86-avx512`), a CPU JSON file, or a GPU: `cuda:h200`,
    `cuda:sm_90`, `cuda:file.json` (see hardware/gpu.py)."""
    if isinstance(spec, CpuTarget) or getattr(spec, "kind", None) == "gpu":
        return spec
    if isinstance(spec, str) and spec.startswith("cuda:"):
        from .gpu import parse_gpu_target
        return parse_gpu_target(spec)
    if spec in (None, "", "host"):
        return detect_host()
    if spec in PRESETS:
        return PRESETS[spec]
    if spec.endswith(".json") or os.path.exists(spec):
        return from_json_file(spec)
    raise ValueError(f"unknown target {spec!r}; expected 'host', one of {sorted(PRESETS)}, a JSON file, "
                     f"or cuda:<gpu>")
