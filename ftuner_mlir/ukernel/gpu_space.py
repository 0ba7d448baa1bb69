"""The matmul-family uKernel space on an NVIDIA GPU (plain Python, no MLIR), after the paper.

A GPU uKernel is a thread-block tile `bm x bn` stepping through the reduction `bk` at a time (operand
tiles staged in shared memory), each thread accumulating a `tm x tn` register tile. Candidates are
aligned to the hardware: `bn` and `bk` (the contiguous axes of B and A) are multiples of the 32-byte
transaction (8 fp32); threads per block are a multiple of warp size x sub-partitions. Filters: shared
memory per block, registers per thread (<= the chip's limit) and per SM. Scores: the block tile's
compute intensity (flops per byte loaded from global memory), occupancy (blocks resident per SM) and,
for a shape, wave efficiency over the SMs and padded work.
"""
from __future__ import annotations

import dataclasses
import math

from ..hardware.gpu import GpuTarget
from ..families import OfFamily, family as family_named

ELEMENT_BYTES = 4
REGISTER_OVERHEAD = 28      # addresses, indices, loop counters per thread (estimate)


@dataclasses.dataclass(frozen=True)
class GpuTile:
    bm: int
    bn: int
    bk: int
    tm: int
    tn: int

    @property
    def threads(self) -> int:
        return (self.bm // self.tm) * (self.bn // self.tn)

    @property
    def shared_bytes(self) -> int:
        return (self.bm + self.bn) * self.bk * ELEMENT_BYTES

    @property
    def registers(self) -> int:
        """Per thread: accumulators, one A and one B fragment, overhead."""
        return self.tm * self.tn + self.tm + self.tn + REGISTER_OVERHEAD

    def intensity(self) -> float:
        """Flops per byte of global memory traffic for one bk step of the block."""
        return 2.0 * self.bm * self.bn * self.bk / ((self.bm + self.bn) * self.bk * ELEMENT_BYTES)

    def blocks_per_sm(self, t: GpuTarget) -> int:
        by_threads = t.max_threads_per_sm // self.threads
        by_registers = t.registers_per_sm // (self.registers * self.threads)
        by_shared = t.shared_bytes_per_sm // self.shared_bytes
        return max(0, min(by_threads, by_registers, by_shared, 32))

    def rejection(self, t: GpuTarget) -> str | None:
        """Why this tile cannot run on `t`, or None."""
        align = t.transaction_bytes // ELEMENT_BYTES
        if self.bm % self.tm or self.bn % self.tn:
            return "block tile not a multiple of the thread tile"
        if self.bn % align or self.bk % align:
            return f"contiguous axes (bn, bk) not multiples of the {t.transaction_bytes}-byte transaction"
        if self.threads % (t.warp_size * t.sub_partitions) or self.threads > t.max_threads_per_block:
            return f"{self.threads} threads: not a multiple of {t.warp_size}x{t.sub_partitions} or too many"
        if (self.bm * self.bk) % self.threads or (self.bn * self.bk) % self.threads:
            return "the staging copies do not split evenly over the threads"
        if self.shared_bytes > t.shared_bytes_per_block:
            return f"{self.shared_bytes} B of shared memory > {t.shared_bytes_per_block}"
        if self.registers > t.max_registers_per_thread:
            return f"{self.registers} registers per thread > {t.max_registers_per_thread}"
        if self.blocks_per_sm(t) < 1:
            return "not one block fits an SM"
        return None


def candidates(t: GpuTarget) -> list[tuple[GpuTile, str | None]]:
    out = []
    for bm, bn in ((32, 32), (64, 32), (32, 64), (64, 64), (128, 64), (64, 128), (128, 128)):
        for bk in (8, 16, 32):
            for tm, tn in ((2, 2), (4, 4), (8, 4), (4, 8), (8, 8)):
                tile = GpuTile(bm, bn, bk, tm, tn)
                out.append((tile, tile.rejection(t)))
    return out


def _score(tile: GpuTile, t: GpuTarget) -> tuple:
    # intensity first (the paper's SIA), then more resident blocks, then less shared memory
    return (tile.intensity(), min(tile.blocks_per_sm(t), 4), -tile.shared_bytes)


@dataclasses.dataclass(frozen=True)
class GpuUKernelSet(OfFamily):
    """Body tile plus the remainder tile that covers the edges (guarded, so it pads at most
    `edge - 1` rows or columns)."""

    family: str
    dtype: str
    body: GpuTile
    edge: GpuTile
    sms: int

    kind = "gpu"

    def __post_init__(self):
        family_named(self.family)          # a ValueError naming the known families
        if self.dtype != "f32":
            raise ValueError("the GPU uKernels are fp32 only")

    def describe(self) -> str:
        b, e = self.body, self.edge
        return (f"{self.family} {self.dtype} on GPU: body block {b.bm}x{b.bn}x{b.bk}, thread tile {b.tm}x{b.tn} "
                f"({b.threads} threads); edge block {e.bm}x{e.bn}x{e.bk} ({e.threads} threads)")


def select_gpu(t: GpuTarget, family: str, dtype: str = "f32") -> GpuUKernelSet:
    options = candidates(t)
    feasible = [tile for tile, why in options if why is None]
    if not feasible:
        reasons = sorted({why for _, why in options}, key=lambda why: (len(why), why))[:3]
        raise ValueError(f"no GPU uKernel tile fits target {t.name!r} (of {len(options)} candidates, e.g.: "
                         f"{'; '.join(reasons)})")
    body = max(feasible, key=lambda tile: _score(tile, t))
    # the edge tile: the smallest feasible block, so an edge pads less than one small tile
    edge = min(feasible, key=lambda tile: (tile.bm * tile.bn, -tile.intensity()))
    return GpuUKernelSet(family, dtype, body, edge, t.sms)


@dataclasses.dataclass
class GpuCoverage:
    body_blocks: int
    edge_blocks: int
    wave_efficiency: float
    padded_fraction: float


def cover_gpu(uks: GpuUKernelSet, t: GpuTarget, batch: int, m: int, n: int, k: int) -> GpuCoverage:
    """Body blocks over the full tiles, edge blocks over the rest; the same split the host code makes."""
    b, e = uks.body, uks.edge
    mb, nb = m // b.bm * b.bm, n // b.bn * b.bn
    body = batch * (m // b.bm) * (n // b.bn)
    # edge region: rows [mb, m) x all columns, plus columns [nb, n) x rows [0, mb)
    edge_rows = batch * math.ceil((m - mb) / e.bm) * math.ceil(n / e.bn) if m > mb else 0
    edge_cols = batch * math.ceil(mb / e.bm) * math.ceil((n - nb) / e.bn) if n > nb and mb else 0
    executed = (body * b.bm * b.bn + (edge_rows + edge_cols) * e.bm * e.bn) * math.ceil(k / b.bk) * b.bk
    useful = batch * m * n * k
    slots = t.sms * max(1, b.blocks_per_sm(t))
    waves = math.ceil(body / slots) if body else 0
    eff = body / (waves * slots) if waves else 1.0
    return GpuCoverage(body, edge_rows + edge_cols, eff, executed / useful - 1.0 if useful else 0.0)
