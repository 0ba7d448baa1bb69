"""The matmul-family uKernel space on a CPU target (plain Python, no MLIR).

A uKernel is a static register tile `mr x nr` that streams over the reduction axis with its
accumulators held in vector registers; `mr` is a power of two or three times one (AVX2's 16 registers
hold 6x16 but not 8x16). The chosen set is one body tile plus the smaller tiles that
cover remainders exactly: every power of two below `mr` for rows; for columns, every power of two
below `nr` down to two vectors, then one masked tile for the last columns (fewer than two vectors: one
or two vectors per row, the last under a mask; the masked lanes are neither loaded nor stored). Any
extent `e` splits into `e // mr` body strips plus at most one strip of each smaller size (the binary
digits of `e % mr`, which is below twice the largest of them), so no shape is padded. Cache blocks (`mc`, `nc`, `kc`) bound the work between
reloads.
"""
from __future__ import annotations

import dataclasses

from ..families import OfFamily, family as family_named
from ..hardware.cpu import CpuTarget

ELEMENT_BITS = {"f32": 32, "f64": 64}
# Row counts of the body tiles: powers of two and three times them (a remainder below mr still splits
# into the powers of two below it), up to 16
ROW_COUNTS = (1, 2, 3, 4, 6, 8, 12, 16)


def powers_of_two_below(n: int) -> tuple[int, ...]:
    """Descending powers of two strictly below n: the remainder strip sizes for a body size n."""
    sizes, p = [], 1
    while p < n:
        sizes.append(p)
        p *= 2
    return tuple(reversed(sizes))


# General-purpose registers the inner loop needs besides one pointer per row of A read in place (A's
# leading dimension is dynamic, so rows cannot be immediate offsets): the B and C pointers, the
# reduction counter and its bound, A's leading dimension, the stack pointer.
LOOP_GP_REGISTERS = 6


@dataclasses.dataclass(frozen=True)
class RegisterTile:
    mr: int
    nr: int

    def vectors(self, lanes: int) -> int:
        """B vectors per reduction step (one row of the tile's B panel)."""
        return self.nr // lanes

    def registers(self, lanes: int) -> int:
        """Vector registers live in the inner loop: accumulators, one B row, one A broadcast."""
        return self.mr * self.vectors(lanes) + self.vectors(lanes) + 1

    def intensity(self) -> float:
        """FMAs per element loaded from L1 in one reduction step (2*mr*nr flops over mr+nr loads)."""
        return 2.0 * self.mr * self.nr / (self.mr + self.nr)

    def step_cycles(self, target: CpuTarget, lanes: int) -> tuple[float, float]:
        """Cycles one reduction step needs on the FMA ports (mr x B vectors FMAs) and on the load ports
        (the B vectors plus one broadcast per row of A): the loop runs at the larger of the two."""
        vectors = self.vectors(lanes)
        return self.mr * vectors / target.fma_ports, (vectors + self.mr) / target.load_ports

    def efficiency(self, target: CpuTarget, lanes: int) -> float:
        """Predicted fraction of the FMA peak: FMA-bound when the loads keep up, and only with enough
        independent accumulators to cover the FMA latency on every port."""
        fma, load = self.step_cycles(target, lanes)
        accumulators = self.mr * self.vectors(lanes)
        return fma / max(fma, load) * min(1.0, accumulators / (target.fma_latency * target.fma_ports))


@dataclasses.dataclass(frozen=True)
class Candidate:
    tile: RegisterTile
    registers: int
    intensity: float
    efficiency: float               # predicted fraction of the FMA peak (see RegisterTile.efficiency)
    rejected: str | None = None     # why the tile cannot run at that speed on this target, if it cannot

    @property
    def feasible(self) -> bool:
        return self.rejected is None


def _rejection(tile: RegisterTile, target: CpuTarget, lanes: int) -> str | None:
    regs = tile.registers(lanes)
    if regs > target.vector_registers:
        return f"needs {regs} vector registers, the target has {target.vector_registers}"
    gprs = tile.mr + LOOP_GP_REGISTERS
    if gprs > target.gp_registers:
        return (f"reads {tile.mr} rows of A in place: needs {gprs} general-purpose registers, "
                f"the target has {target.gp_registers}")
    return None


def candidates(target: CpuTarget, dtype: str = "f32") -> list[Candidate]:
    """Hardware-aligned register tiles: ROW_COUNTS rows (remainders are binary strips), columns a
    power-of-two multiple of the vector width (other widths lower to split vectors that run ~20x slower),
    each scored by the port model and, when it does not fit the registers, rejected with the reason."""
    lanes = target.lanes(ELEMENT_BITS[dtype])
    out = []
    for mr in ROW_COUNTS:
        for vectors in (1, 2, 4):
            tile = RegisterTile(mr, vectors * lanes)
            out.append(Candidate(tile, tile.registers(lanes), tile.intensity(), tile.efficiency(target, lanes),
                                 _rejection(tile, target, lanes)))
    return out


def _largest_power_of_two_at_most(x: float) -> int:
    p = 1
    while p * 2 <= x:
        p *= 2
    return p


@dataclasses.dataclass(frozen=True)
class UKernelSet(OfFamily):
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
    chains: int = 8   # FMAs the core keeps in flight (ports x latency): independent accumulators needed

    def __post_init__(self):
        family_named(self.family)          # a ValueError naming the known families
        if self.dtype not in ELEMENT_BITS:
            raise ValueError(f"unsupported element type {self.dtype!r}; expected one of {sorted(ELEMENT_BITS)}")
        for name in ("mr", "nr", "kc", "mc", "nc", "cores", "lanes", "chains"):
            if getattr(self, name) <= 0:
                raise ValueError(f"uKernel set field {name} must be positive")
        if self.mc % self.mr or self.nc % self.nr:
            raise ValueError(f"cache block {self.mc}x{self.nc} must be a multiple of the register tile "
                             f"{self.mr}x{self.nr}")

    @property
    def row_sizes(self) -> tuple[int, ...]:
        return (self.mr,) + powers_of_two_below(self.mr)

    @property
    def tail_width(self) -> int:
        """The masked column tail covers the last columns, fewer than this: up to two vectors, so a tail
        of more than one vector shares each A broadcast between its two (one call, not a 16-wide
        strip and a masked one)."""
        return min(2 * self.lanes, self.nr)

    @property
    def masked_widths(self) -> tuple[int, ...]:
        """The masked tail kernels' widths (one vector, and two where the tail can be wider than one):
        a tail of w columns runs in the narrowest that holds it."""
        return tuple(w for w in (self.lanes, 2 * self.lanes) if w <= self.tail_width)

    @property
    def col_sizes(self) -> tuple[int, ...]:
        """Column strip sizes in whole vectors: the body, then the powers of two down to tail_width."""
        return (self.nr,) + tuple(s for s in powers_of_two_below(self.nr) if s >= self.tail_width)

    def ukernels(self) -> list[tuple[int, int]]:
        """Every (rows, cols) tile of the set; the first is the body uKernel. The masked column tails (per
        row size and masked width, codegen/matmul.py emit_masked_ukernel) are not listed."""
        return [(m, n) for m in self.row_sizes for n in self.col_sizes]

    def describe(self) -> str:
        return (f"{self.family} {self.dtype}: body {self.mr}x{self.nr}, row remainders "
                f"{list(self.row_sizes[1:])}, column remainders {list(self.col_sizes[1:])} and a masked "
                f"tail of up to {self.tail_width - 1} columns, blocks up to {self.mc}x{self.nc}, kc {self.kc}, {self.cores} cores")



def ranked_candidates(target: CpuTarget, dtype: str = "f32") -> list[Candidate]:
    """Feasible candidates, best first: highest predicted efficiency; ties: highest intensity (fewer
    bytes from L1 and L2 per flop), fewer registers (room for the compiler's scheduling), fewer rows."""
    feasible = [c for c in candidates(target, dtype) if c.feasible]
    return sorted(feasible, key=lambda c: (-round(c.efficiency, 6), -c.intensity, c.registers, c.tile.mr))


def select(target: CpuTarget, family: str, dtype: str = "f32", tile: RegisterTile | None = None) -> UKernelSet:
    """The given register tile (a measured one) or the best analytic one, then cache blocks sized from
    the cache levels."""
    best = tile or ranked_candidates(target, dtype)[0].tile
    elem = ELEMENT_BITS[dtype] // 8
    # The A strip (mr x kc) stays in L1 while the B panels of the block stream through it from L2 (one
    # per column strip: codegen/matmul.py's rows loop): it takes at most a sixth of L1. A longer kc means
    # fewer passes over C (one load and store of every C tile per reduction block): with kc = 128 and
    # K = 3072, 24 passes.
    kc = _largest_power_of_two_at_most(target.l1d_bytes / 6 / (best.mr * elem))
    # A block (mc x kc) and B block (kc x nc) each take a quarter of L2.
    span = _largest_power_of_two_at_most(target.l2_bytes / 4 / (kc * elem))
    mc = max(best.mr, span // best.mr * best.mr)
    nc = max(best.nr, span // best.nr * best.nr)
    return UKernelSet(family, dtype, best.mr, best.nr, kc, mc, nc, target.cores, target.lanes(ELEMENT_BITS[dtype]),
                      target.fma_ports * target.fma_latency)
