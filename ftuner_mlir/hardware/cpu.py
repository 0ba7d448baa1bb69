"""CPU hardware model: ISA level, vector registers, cache sizes, cores.

Plain Python (no MLIR). A `CpuTarget` is frozen and hashable: the same target always yields the same
uKernel selection and therefore the same IR.
"""
from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from .json_file import read_json_object

ISA_VECTOR_BITS = {"avx512": 512, "avx2": 256, "sse": 128}
ISA_VECTOR_REGISTERS = {"avx512": 32, "avx2": 16, "sse": 16}
# How vector.transpose lowers for the B^T pack: AVX-512 has a dedicated 16x16 shuffle sequence
ISA_TRANSPOSE_LOWERING = {"avx512": "shuffle16x16", "avx2": "shuffle1d", "sse": "shuffle1d"}
GP_REGISTERS = 16              # x86-64

# The bf16 matrix engine a core has, from its /proc/cpuinfo flags, best first: AMX tiles (`tdpbf16ps`,
# 16x16x32 multiply-adds an instruction), AVX512-BF16 (`vdpbf16ps`, pairs of bf16 into fp32 lanes), or
# none (bf16 operands are widened to fp32 and run on the FMA units).
BF16_ENGINES = {"amx": {"amx_bf16", "amx_tile"}, "avx512_bf16": {"avx512_bf16"}, "none": set()}


@dataclasses.dataclass(frozen=True)
class Core:
    """Issue rates of one core at the ISA's full vector width: what bounds a uKernel's inner loop."""
    fma_ports: int             # vector FMAs started per cycle
    load_ports: int            # loads per cycle (a vector row of B, or a broadcast element of A)
    fma_latency: int           # cycles before an FMA's result can feed the next FMA
    bf16_dot_flops: int = 0    # flops per cycle of AVX512-BF16's vdpbf16ps at 512 bits (0: none)


# (core family, isa) -> core. Intel server cores (Skylake-SP .. Emerald Rapids) run two 512-bit FMAs and
# two 512-bit loads per cycle; AMD Zen 4 runs 512-bit ops on its 256-bit units, so one 512-bit FMA per
# cycle, with two loads; Zen 5 (EPYC 9005) has full-width 512-bit units: two FMAs and two 512-bit loads
# (measured here: 508 GFLOP/s on 2 cores, 2 x 32 flops x ~4 GHz per core). With AVX2 all do two 256-bit
# FMAs and two loads per cycle.
# vdpbf16ps (16 lanes x 2 bf16 products: 64 flops) on Sapphire Rapids issues every other cycle: 32 flops
# a cycle, half its fp32 FMAs' 64 (measured on this project's Xeon VM: 0.78 ns per vdpbf16ps, 0.19 ns per
# FMA, 24 independent chains); on Zen 4 and Zen 5 it is taken to issue at the FMA's rate (one and two a
# cycle: not measured yet), twice the fp32 flops.
MICROARCHITECTURES = {
    ("intel", "avx512"): Core(fma_ports=2, load_ports=2, fma_latency=4, bf16_dot_flops=32),
    ("amd", "avx512"): Core(fma_ports=1, load_ports=2, fma_latency=4, bf16_dot_flops=64),
    ("amd-zen5", "avx512"): Core(fma_ports=2, load_ports=2, fma_latency=4, bf16_dot_flops=128),
    ("intel", "avx2"): Core(fma_ports=2, load_ports=2, fma_latency=4),
    ("amd", "avx2"): Core(fma_ports=2, load_ports=2, fma_latency=4),
    ("amd-zen5", "avx2"): Core(fma_ports=2, load_ports=2, fma_latency=4),
    ("intel", "sse"): Core(fma_ports=2, load_ports=2, fma_latency=4),
    ("amd", "sse"): Core(fma_ports=2, load_ports=2, fma_latency=4),
    ("amd-zen5", "sse"): Core(fma_ports=2, load_ports=2, fma_latency=4),
}
AMD_ZEN5_FAMILY = 0x1A          # /proc/cpuinfo "cpu family" of Zen 5; Zen 3 and Zen 4 are 0x19


# What a real x86 core can have: values outside are typos or units mixed up (bytes vs KiB), and some
# (a 65536-bit vector, zero registers) would make the uKernel space loop forever or divide by zero.
PHYSICAL_RANGES = {
    "vector_bits": (128, 512), "vector_registers": (8, 64), "l1d_bytes": (4 << 10, 4 << 20),
    "l2_bytes": (64 << 10, 256 << 20), "l3_bytes": (0, 64 << 30), "cores": (1, 4096),
    "fma_ports": (1, 8), "load_ports": (1, 8), "fma_latency": (1, 64), "gp_registers": (8, 64),
    "bf16_dot_flops": (0, 4096),
}


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
    fma_ports: int = 2        # full-width vector FMAs per cycle per core
    load_ports: int = 2       # loads per cycle per core (vectors or broadcast elements)
    fma_latency: int = 4      # cycles
    gp_registers: int = GP_REGISTERS
    bf16_engine: str = "none"   # BF16_ENGINES: "amx" | "avx512_bf16" | "none"
    bf16_dot_flops: int = 0     # per cycle per core of AVX512-BF16's vdpbf16ps (Core.bf16_dot_flops)

    kind = "cpu"

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise ValueError(f"target field name must be a string, got {self.name!r}")
        if not isinstance(self.isa, str) or self.isa not in ISA_VECTOR_BITS:
            raise ValueError(f"unknown isa {self.isa!r}; expected one of {sorted(ISA_VECTOR_BITS)}")
        for field, (lo, hi) in PHYSICAL_RANGES.items():
            value = getattr(self, field)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"target field {field} must be an integer, got {value!r}")
            if not lo <= value <= hi:
                raise ValueError(f"target field {field} = {value} is outside the physical range [{lo}, {hi}]")
        if self.bf16_engine not in BF16_ENGINES:
            raise ValueError(f"unknown bf16_engine {self.bf16_engine!r}; expected one of {sorted(BF16_ENGINES)}")
        if self.vector_bits != ISA_VECTOR_BITS[self.isa]:
            raise ValueError(f"target field vector_bits = {self.vector_bits} does not match isa {self.isa!r} "
                             f"({ISA_VECTOR_BITS[self.isa]}-bit vectors)")

    def lanes(self, element_bits: int) -> int:
        """Elements of `element_bits` in one vector register."""
        return self.vector_bits // element_bits

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=2)

    def describe(self) -> str:
        kib = lambda b: f"{b // 1024} KiB"
        return (f"{self.name}: {self.isa}, {self.vector_bits}-bit x {self.vector_registers} vector registers, "
                f"L1d {kib(self.l1d_bytes)}, L2 {kib(self.l2_bytes)}, L3 {kib(self.l3_bytes)}, "
                f"{self.cores} cores, {self.fma_ports} FMA + {self.load_ports} load ports "
                f"(FMA latency {self.fma_latency}), bf16 matrix engine: {self.bf16_engine}"
                + (f" (vdpbf16ps {self.bf16_dot_flops} flops/cycle, fp32 FMAs {self.fp32_flops})"
                   if self.bf16_engine == "avx512_bf16" else ""))

    @property
    def fp32_flops(self) -> int:
        """fp32 flops per cycle per core of the FMAs at full width."""
        return self.fma_ports * 2 * self.lanes(32)


def _preset(name, isa, l1, l2, l3, cores, vendor="intel", bf16_engine="none"):
    core = MICROARCHITECTURES[(vendor, isa)]
    return CpuTarget(name, isa, ISA_VECTOR_BITS[isa], ISA_VECTOR_REGISTERS[isa], l1, l2, l3, cores,
                     core.fma_ports, core.load_ports, core.fma_latency, bf16_engine=bf16_engine,
                     bf16_dot_flops=core.bf16_dot_flops)


PRESETS = {
    "x86-avx512": _preset("x86-avx512", "avx512", 32 << 10, 1 << 20, 32 << 20, 2),
    "x86-avx2": _preset("x86-avx2", "avx2", 32 << 10, 512 << 10, 16 << 20, 2),
    # Intel Xeon 4th/5th gen (Sapphire / Emerald Rapids): 48 KiB L1d, 2 MiB L2 per core
    "intel-spr": _preset("intel-spr", "avx512", 48 << 10, 2 << 20, 105 << 20, 2, "intel", "amx"),
    # AMD EPYC 9004 (Zen 4, Genoa): 32 KiB L1d, 1 MiB L2 per core, 32 MiB L3 per CCD
    "amd-zen4": _preset("amd-zen4", "avx512", 32 << 10, 1 << 20, 32 << 20, 2, "amd", "avx512_bf16"),
    # AMD EPYC 9005 (Zen 5, Turin): 48 KiB L1d, 1 MiB L2 per core, 32 MiB L3 per CCD
    "amd-zen5": _preset("amd-zen5", "avx512", 48 << 10, 1 << 20, 32 << 20, 2, "amd-zen5", "avx512_bf16"),
}


def _cpu_flags(cpuinfo: str) -> set[str]:
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def _core_family(cpuinfo: str) -> str:
    """The MICROARCHITECTURES row: "intel", "amd" (Zen 4 and before) or "amd-zen5" (and later)."""
    if "AuthenticAMD" not in cpuinfo:
        return "intel"
    for line in cpuinfo.splitlines():
        if line.startswith("cpu family"):
            try:
                return "amd-zen5" if int(line.split(":", 1)[1]) >= AMD_ZEN5_FAMILY else "amd"
            except ValueError:
                break
    return "amd"


def bf16_engine_from_flags(flags: set[str]) -> str:
    """The best BF16_ENGINES entry whose flags are all present."""
    return next(name for name, needs in BF16_ENGINES.items() if needs <= flags)


def _isa_from_flags(flags: set[str]) -> str:
    if {"avx512f", "avx512vl"} <= flags or "avx512f" in flags:
        return "avx512"
    if {"avx2", "fma"} <= flags:
        return "avx2"
    return "sse"


# The /proc/cpuinfo flags the code compiled for an ISA level may use: x86-64-v4, v3, v2 (LLVM's
# levels; the presets that name a CPU add extensions f32/f64 code does not use: AMX, FP16, VP2INTERSECT)
ISA_HOST_FLAGS = {
    "sse": {"sse4_1", "sse4_2", "ssse3", "popcnt"},
    "avx2": {"sse4_1", "sse4_2", "ssse3", "popcnt", "avx", "avx2", "fma", "bmi1", "bmi2", "f16c", "movbe"},
    "avx512": {"sse4_1", "sse4_2", "ssse3", "popcnt", "avx", "avx2", "fma", "bmi1", "bmi2", "f16c", "movbe",
               "avx512f", "avx512vl", "avx512bw", "avx512dq", "avx512cd"},
}


def missing_host_features(target: CpuTarget, cpuinfo_path="/proc/cpuinfo") -> list[str]:
    """The CPU extensions code compiled for `target` may use that this machine lacks (none for "host";
    none when /proc/cpuinfo cannot be read: then nothing is known to be missing)."""
    if target.name == "host":
        return []
    try:
        flags = _cpu_flags(Path(cpuinfo_path).read_text())
    except OSError:
        return []
    return sorted((ISA_HOST_FLAGS[target.isa] | BF16_ENGINES[target.bf16_engine]) - flags) if flags else []


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
        cpuinfo = Path(cpuinfo_path).read_text()
    except OSError:
        cpuinfo = ""
    flags = _cpu_flags(cpuinfo)
    isa = _isa_from_flags(flags)
    core = MICROARCHITECTURES[(_core_family(cpuinfo), isa)]
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
        fma_ports=core.fma_ports,
        load_ports=core.load_ports,
        fma_latency=core.fma_latency,
        bf16_engine=bf16_engine_from_flags(flags) if isa == "avx512" else "none",
        bf16_dot_flops=core.bf16_dot_flops,
    )


def from_json_file(path: str) -> CpuTarget:
    data = read_json_object(path, "target")
    base = dataclasses.asdict(PRESETS["x86-avx512" if data.get("isa", "avx512") == "avx512" else "x86-avx2"])
    unknown = set(data) - set(base)
    if unknown:
        raise ValueError(f"target file {path}: unknown fields {sorted(unknown)}; known: {sorted(base)}")
    isa = data.get("isa", base["isa"])
    if "isa" in data and isinstance(isa, str) and isa in ISA_VECTOR_BITS:
        base.update(vector_bits=ISA_VECTOR_BITS[isa], vector_registers=ISA_VECTOR_REGISTERS[isa])
    base.update(data)
    base["name"] = data.get("name", Path(path).stem)
    try:
        return CpuTarget(**base)
    except ValueError as err:
        raise ValueError(f"target file {path}: {err}") from None
