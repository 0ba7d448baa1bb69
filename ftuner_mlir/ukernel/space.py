"""The matmul-family uKernel space on a CPU target (plain Python, no MLIR).

A uKernel is a static register tile `mr x nr` that streams over the reduction axis with its
accumulators held in vector registers. The chosen set is one body tile plus the smaller tiles that
cover remainders exactly: every power of two below `mr` for rows, below `nr` for columns. Any extent
`e` splits into `e // mr` body strips plus at most one strip of each smaller size (the binary digits of
`e % mr`), so no shape is padded. Cache blocks (`mc`, `nc`, `kc`) bound the work between reloads.
"""
from __future__ import annotations

import dataclasses

from ..hardware.cpu import CpuTarget

# op family -> (has batch axis, B operand stored as N x K)
FAMILIES = {
    "matmul": (False, False),
    "matmul_transpose_b": (False, True),
    "batch_matmul": (True, False),
    "batch_matmul_transpose_b": (True, True),
}
ELEMENT_BITS = {"f32": 32, "f64": 64}
MAX_ROWS = 16


def powers_of_two_below(n: int) -> tuple[int, ...]:
    """Descending powers of two strictly below n: the remainder strip sizes for a body size n."""
    sizes, p = [], 1
    while p < n:
        sizes.append(p)
        p *= 2
    return tuple(reversed(sizes))


@dataclasses.dataclass(frozen=True)
class RegisterTile:
    mr: int
    nr: int

    def registers(self, lanes: int) -> int:
        """Vector registers live in the inner loop: accumulators, one B row, one A broadcast."""
        return self.mr * self.nr // lanes + self.nr // lanes + 1

    def intensity(self) -> float:
        """FMAs per element loaded from L1 in one reduction step (2*mr*nr flops over mr+nr loads)."""
        return 2.0 * self.mr * self.nr / (self.mr + self.nr)


@dataclasses.dataclass(frozen=True)
class Candidate:
    tile: RegisterTile
    registers: int
    intensity: float
    feasible: bool


def candidates(target: CpuTarget, dtype: str = "f32") -> list[Candidate]:
    """Hardware-aligned register tiles: rows a power of two (so remainders are binary strips), columns a
    power-of-two multiple of the vector width (other widths lower to split vectors that run ~20x slower)."""
    lanes = target.lanes(ELEMENT_BITS[dtype])
    out = []
    mr = 1
    while mr <= MAX_ROWS:
        for vectors in (1, 2, 4):
            tile = RegisterTile(mr, vectors * lanes)
            regs = tile.registers(lanes)
            out.append(Candidate(tile, regs, tile.intensity(), regs <= target.vector_registers))
        mr *= 2
    return out


def _largest_power_of_two_at_most(x: float) -> int:
    p = 1
    while p * 2 <= x:
        p *= 2
    return p


class FamilyTraits:
    """What the op family implies, for any uKernel set with a `family` field."""

    @property
    def batched(self) -> bool:
        return FAMILIES[self.family][0]

    @property
    def transpose_b(self) -> bool:
        return FAMILIES[self.family][1]


@dataclasses.dataclass(frozen=True)
class UKernelSet(FamilyTraits):
    """The uKernels selected for one (op family, dtype, target)."""

    family: str
    dtype: str
    mr: int
    nr: int
    kc: int       # reduction block: an A strip and a B panel of kc fit in L1
    mc: int       # max rows per cache block (multiple of mr)
    nc: int       # max columns per cache block (multiple of nr)
    cores: int
    lanes: int = 16   # elements per vector register: the tile of the B^T packing transposes

    def __post_init__(self):
        if self.family not in FAMILIES:
            raise ValueError(f"unknown op family {self.family!r}; expected one of {sorted(FAMILIES)}")
        if self.dtype not in ELEMENT_BITS:
            raise ValueError(f"unsupported element type {self.dtype!r}; expected one of {sorted(ELEMENT_BITS)}")
        for name in ("mr", "nr", "kc", "mc", "nc", "cores", "lanes"):
            if getattr(self, name) <= 0:
                raise ValueError(f"uKernel set field {name} must be positive")
        if self.mc % self.mr or self.nc % self.nr:
            raise ValueError(f"cache block {self.mc}x{self.nc} must be a multiple of the register tile "
                             f"{self.mr}x{self.nr}")

    @property
    def row_sizes(self) -> tuple[int, ...]:
        return (self.mr,) + powers_of_two_below(self.mr)

    @property
    def col_sizes(self) -> tuple[int, ...]:
        return (self.nr,) + powers_of_two_below(self.nr)

    def ukernels(self) -> list[tuple[int, int]]:
        """Every (rows, cols) tile of the set; the first is the body uKernel."""
        return [(m, n) for m in self.row_sizes for n in self.col_sizes]

    def describe(self) -> str:
        return (f"{self.family} {self.dtype}: body {self.mr}x{self.nr}, row remainders "
                f"{list(self.row_sizes[1:])}, column remainders {list(self.col_sizes[1:])}, "
                f"blocks up to {self.mc}x{self.nc}, kc {self.kc}, {self.cores} cores")



def ranked_candidates(target: CpuTarget, dtype: str = "f32") -> list[Candidate]:
    """Feasible candidates, best analytic score first; ties: fewer registers (more room for the
    compiler's scheduling), then fewer rows."""
    feasible = [c for c in candidates(target, dtype) if c.feasible]
    return sorted(feasible, key=lambda c: (-c.intensity, c.registers, c.tile.mr))


def select(target: CpuTarget, family: str, dtype: str = "f32", tile: RegisterTile | None = None) -> UKernelSet:
    """The given register tile (a measured one) or the best analytic one, then cache blocks sized from
    the cache levels."""
    best = tile or ranked_candidates(target, dtype)[0].tile
    elem = ELEMENT_BITS[dtype] // 8
    # A strip (mr x kc) and B panel (kc x nr) share half of L1; the rest holds C and prefetched lines.
    kc = _largest_power_of_two_at_most(target.l1d_bytes / 2 / ((best.mr + best.nr) * elem))
    # A block (mc x kc) and B block (kc x nc) each take a quarter of L2.
    span = _largest_power_of_two_at_most(target.l2_bytes / 4 / (kc * elem))
    mc = max(best.mr, span // best.mr * best.mr)
    nc = max(best.nr, span // best.nr * best.nr)
    return UKernelSet(family, dtype, best.mr, best.nr, kc, mc, nc, target.cores, target.lanes(ELEMENT_BITS[dtype]))
