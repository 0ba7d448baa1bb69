"""The bf16 matmul uKernel space on the CPU's bf16 engines, AMX or AVX512-BF16 (plain Python, no MLIR).

Both engines multiply bf16 pairs into fp32 and read B in the same VNNI panels (16 columns, each K pair
interleaved: 64 bytes a panel row), so one dispatch serves both (codegen/bf16_matmul.py); they differ in
the register block that covers C and in how C's rows are composed.

AVX512-BF16's `vdpbf16ps` adds the products of 16 bf16 pairs to 16 fp32 lanes: an FMA that consumes two
K a step. Its register block is the fp32 uKernels' own problem (ukernel/space.py: mr rows of fp32
accumulators times nr / 16 vectors, one B vector per panel and one broadcast A pair per row each step,
within 32 registers and covering the FMA latency), so the fp32 model's best tile is taken as is. Rows
are composed as the fp32 uKernels' are (the body, then binary digits); columns and K are padded in the
packs, as for AMX, the edge panel's C read and written under a mask.

AMX has 8 tile registers of up to 16 rows x 64 bytes, and one multiply, `tdpbf16ps`, which adds a
[rows x 32] bf16 A tile times a [16 x 32] VNNI B tile (pairs of K interleaved: 16 columns x 2) into a
[rows x 16] fp32 C tile. Tile shapes are static (the tile configuration), so a dynamic extent is
covered by composition, as the vector uKernels are (ukernel/space.py):

- rows: strips of `mr` (a block of C tiles, each 16 rows), then one strip of each power of two below
  16 (the binary digits of the rest): tiles of 8, 4, 2, 1 rows, never a padded row;
- columns: C tiles of 16 columns, the last one stored through a scratch tile when fewer remain;
- the reduction: steps of 32, the last step's missing K (up to 31) read as zeros from the packs.

The column and K edges are padded in the packs, not composed of narrower tiles, because a narrower
tile costs the same: `tdpbf16ps` takes a fixed time per C row whatever its columns and K (measured on
a Sapphire Rapids core, 4 independent accumulators: 4.66 ns for 16x16x32, 4.69 for 16x8x32, 4.77 for
16x16x16 and 16x16x2; 2.92 ns for 8 rows, 2.75 ns for 4 and 1 row). ROW_TIME below is that table.
"""
from __future__ import annotations

import dataclasses

from ..families import OfFamily, family as family_named
from ..hardware.cpu import CpuTarget
from .cover import IntArith
from .space import powers_of_two_below, ranked_candidates

TILE_REGISTERS = 8
TILE_ROWS = 16                 # rows of a tile (of A and C; B's rows are K pairs)
TILE_BYTES = 64                # bytes per tile row
K_STEP = TILE_BYTES // 2       # bf16 of K one multiply consumes
N_TILE = TILE_BYTES // 4       # fp32 columns of a C tile
ROW_TILES = (16, 8, 4, 2, 1)   # rows of the remainder tiles (binary digits of a rest below 16)
# A batched product's rest below 16 rows runs as one strip of exactly that many rows (a tile
# configuration per row count). Each strip is a call that configures the tiles (ldtilecfg, tilerelease:
# ~0.11 us on Sapphire Rapids; single-threaded, 192 batched 15x16x64 products: 8 + 4 + 2 + 1 rows 0.56 us
# a matrix, one 15-row strip 0.22 us), paid per matrix there; a 2-D product pays it once per block, so
# it keeps the binary digits (fewer functions to compile).
EXACT_ROW_TILES = tuple(range(15, 0, -1))
# Measured time of one tdpbf16ps by C rows, relative to a full 16-row tile (see the module docstring):
# below 8 rows the instruction does not get cheaper.
ROW_TIME = {16: 1.0, 8: 0.63, 4: 0.59, 2: 0.59, 1: 0.59}
ENGINES = ("amx", "avx512_bf16")
VECTOR_REGISTERS = 32          # zmm registers: AVX512-BF16's accumulators, B vectors and broadcasts


@dataclasses.dataclass(frozen=True)
class Blocking:
    """C as `a x b` tiles per step, fed by `a` A tiles and `b` B tiles."""
    a: int
    b: int

    @property
    def tiles(self) -> int:
        return self.a * self.b + self.a + self.b

    @property
    def loads_per_multiply(self) -> float:
        """Tile loads (A and B, from L1) per tdpbf16ps: what competes with the multiplies."""
        return (self.a + self.b) / (self.a * self.b)


def blockings() -> list[tuple[Blocking, str | None]]:
    """Each register blocking up to 4 x 4 tiles, with the reason it is rejected (None: feasible)."""
    out = []
    for a in range(1, 5):
        for b in range(1, 5):
            block = Blocking(a, b)
            why = None if block.tiles <= TILE_REGISTERS else \
                f"needs {block.tiles} tile registers (C {a * b}, A {a}, B {b}), AMX has {TILE_REGISTERS}"
            out.append((block, why))
    return out


def best_blocking() -> Blocking:
    """Fewest loads per multiply; ties: more C tiles (more independent accumulators)."""
    feasible = [b for b, why in blockings() if why is None]
    return min(feasible, key=lambda b: (b.loads_per_multiply, -b.a * b.b, b.a))


def _multiple_at_most(x: float, step: int) -> int:
    return max(step, int(x) // step * step)


@dataclasses.dataclass(frozen=True)
class Bf16Set(OfFamily):
    """The bf16 uKernels of one matmul family on one engine: body strips of `mr` rows x `nr` columns
    (AMX: the blocking's C tiles; AVX512-BF16: the register block). A task's B block, packed for the
    whole K, takes at most `b_block_bytes` (its columns are chosen at run time from K); a row strip runs
    K in chunks of `k_chunk`, its A chunk held in L1 while the B panels stream from L2 (C's strip, in
    L2, is reloaded once per chunk)."""

    family: str
    mr: int
    nr: int
    k_chunk: int
    b_block_bytes: int
    cores: int
    dtype: str = "bf16"
    engine: str = "amx"

    def __post_init__(self):
        family_named(self.family)
        if self.engine not in ENGINES:
            raise ValueError(f"unknown bf16 engine {self.engine!r}; expected one of {list(ENGINES)}")
        for name in ("mr", "nr", "k_chunk", "b_block_bytes", "cores"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) <= 0:
                raise ValueError(f"bf16 set field {name} must be a positive integer")
        if self.nr % N_TILE or self.k_chunk % K_STEP:
            raise ValueError(f"bf16 body {self.mr}x{self.nr}, K chunk {self.k_chunk}: columns a multiple of "
                             f"{N_TILE}, K of {K_STEP}")
        if self.engine == "avx512_bf16":
            if self.mr * self.col_tiles + self.col_tiles + 1 > VECTOR_REGISTERS:
                raise ValueError(f"AVX512-BF16 body {self.mr}x{self.nr} needs more than {VECTOR_REGISTERS} vector registers")
            return
        if self.mr % TILE_ROWS:
            raise ValueError(f"AMX body {self.mr}x{self.nr}: rows a multiple of {TILE_ROWS}")
        if (self.mr // TILE_ROWS) * (self.nr // N_TILE) + self.mr // TILE_ROWS + self.nr // N_TILE > TILE_REGISTERS:
            raise ValueError(f"AMX body {self.mr}x{self.nr} needs more than {TILE_REGISTERS} tile registers")

    @property
    def amx(self) -> bool:
        return self.engine == "amx"

    @property
    def transposable(self) -> bool:
        """A.B^T on AMX: B (n x k, K contiguous) can be read in place as the A tiles of C^T = B.A^T."""
        return self.amx and self.family == "matmul_transpose_b"

    @property
    def row_tiles(self) -> int:
        """Row groups of a body strip: AMX tiles of 16 rows; one group of mr rows on AVX512-BF16."""
        return self.mr // TILE_ROWS if self.amx else 1

    @property
    def col_tiles(self) -> int:
        return self.nr // N_TILE

    @property
    def exact_rests(self) -> bool:
        """A batched family's rest below 16 rows is one strip of exactly that many rows (AMX: a tile
        configuration per call, paid per matrix)."""
        return self.batched and self.amx

    @property
    def row_sizes(self) -> tuple[int, ...]:
        """Row strips: the body, then the remainder strips' rows (AMX: 16, then the binary digits of a
        rest below 16, or each count below 16 for a batched family; AVX512-BF16: binary digits)."""
        if not self.amx:
            return (self.mr,) + powers_of_two_below(self.mr)
        rest = (TILE_ROWS,) + EXACT_ROW_TILES if self.batched else ROW_TILES
        return (self.mr,) + tuple(r for r in rest if r < self.mr)

    def describe(self) -> str:
        if self.amx:
            block = f"body {self.mr}x{self.nr} ({self.row_tiles}x{self.col_tiles} C tiles)"
        else:
            block = f"body {self.mr}x{self.nr} ({self.mr}x{self.col_tiles} fp32 accumulator vectors)"
        return (f"{self.family} bf16 on {'AMX' if self.amx else 'AVX512-BF16'}: {block}, "
                f"row remainders {list(self.row_sizes[1:])}, column and K edges zero-padded in the packs, "
                f"K in chunks of {self.k_chunk}, B blocks packed for the whole K in up to "
                f"{self.b_block_bytes // 1024} KiB, {self.cores} cores")


def engine_in_use(target: CpuTarget) -> tuple[str, str]:
    """(engine, why): what the target's bf16 matmuls run on. AMX where the target has it; AVX512-BF16
    where its dot products outrun the fp32 FMAs (Zen 4 and 5: twice); else "none", bf16 operands widened
    to fp32 (on Sapphire Rapids vdpbf16ps issues every other cycle: half the fp32 FMAs' flops)."""
    if target.bf16_engine == "amx":
        return "amx", "AMX tiles (tdpbf16ps)"
    if target.bf16_engine == "avx512_bf16":
        if target.bf16_dot_flops > target.fp32_flops:
            return "avx512_bf16", (f"AVX512-BF16: vdpbf16ps {target.bf16_dot_flops} flops/cycle, "
                                   f"fp32 FMAs {target.fp32_flops}")
        return "none", (f"widened to fp32: AVX512-BF16's vdpbf16ps does {target.bf16_dot_flops} flops/cycle "
                        f"here, the fp32 FMAs {target.fp32_flops}")
    return "none", "widened to fp32: no bf16 engine on this target"


def select_bf16(target: CpuTarget, family: str) -> Bf16Set:
    """The set of the engine the target's bf16 matmuls run on (a ValueError where that is none)."""
    engine, why = engine_in_use(target)
    if engine == "amx":
        return select_amx(target, family)
    if engine == "avx512_bf16":
        return select_avx512_bf16(target, family)
    raise ValueError(f"target {target.name}: bf16 matmuls are {why}")


def select_avx512_bf16(target: CpuTarget, family: str) -> Bf16Set:
    """The fp32 model's best register tile (a vdpbf16ps is an FMA on 16 fp32 lanes that eats two K), its
    columns whole panels; the A strip (mr rows x k_chunk bf16) in a third of L1; a task's packed B block
    in half of L2."""
    if target.bf16_engine != "avx512_bf16" or target.isa != "avx512":
        raise ValueError(f"target {target.name} has no AVX512-BF16 (bf16 engine: {target.bf16_engine})")
    tile = next(c.tile for c in ranked_candidates(target, "f32") if c.tile.nr % N_TILE == 0)
    k_chunk = _multiple_at_most(target.l1d_bytes / 3 / (tile.mr * 2), K_STEP)
    return Bf16Set(family, tile.mr, tile.nr, k_chunk, target.l2_bytes // 2, target.cores, engine="avx512_bf16")


def select_amx(target: CpuTarget, family: str) -> Bf16Set:
    """The blocking with the fewest loads per multiply; the body's A chunk (mr rows x k_chunk bf16) in
    a third of L1, the rest left to the B tiles streaming through and the C tiles (on Sapphire Rapids,
    single-threaded Dense shapes: 256 beat half of L1's 384 by 0-12%, the whole K of 768 lost 20%); a
    task's packed B block in half of L2."""
    if target.bf16_engine != "amx":
        raise ValueError(f"target {target.name} has no AMX (bf16 engine: {target.bf16_engine})")
    block = best_blocking()
    mr, nr = block.a * TILE_ROWS, block.b * N_TILE
    k_chunk = _multiple_at_most(target.l1d_bytes / 3 / (mr * 2), K_STEP)
    return Bf16Set(family, mr, nr, k_chunk, target.l2_bytes // 2, target.cores, engine="amx")


def block_shape(aset: Bf16Set, m, n, k, ar=IntArith(), batch=1) -> tuple:
    """(mc, nc) of a task's block, at run time: columns first, as many as keep the B block packed for
    the whole K within b_block_bytes and give every core a task (the cores a batch does not occupy), in
    a multiple of the cores; then rows, split only as far as the cores need more tasks (each row block
    packs its B block again)."""
    one, row, col = ar.const(1), ar.const(aset.mr), ar.const(aset.nr)
    cores = ar.ceil_div(ar.const(aset.cores), ar.max(ar.const(batch) if isinstance(batch, int) else batch, one))
    k_padded = ar.round_up(ar.max(k, one), ar.const(K_STEP))
    cap = ar.max(ar.mul(ar.floor_div(ar.const(aset.b_block_bytes // 2), ar.mul(k_padded, col)), col), col)
    strips_n = ar.ceil_div(ar.max(n, one), col)
    blocks_n = ar.max(ar.ceil_div(n, cap), ar.min(cores, strips_n))
    blocks_n = ar.min(ar.round_up(blocks_n, cores), strips_n)
    nc = ar.mul(ar.ceil_div(strips_n, blocks_n), col)
    tasks_n = ar.ceil_div(ar.max(n, one), nc)
    blocks_m = ar.min(ar.max(ar.ceil_div(cores, tasks_n), one), ar.ceil_div(ar.max(m, one), row))
    mc = ar.mul(ar.ceil_div(ar.ceil_div(ar.max(m, one), row), blocks_m), row)
    return mc, nc


# What a product whose B is packed per call pays beyond the multiplies, per element, relative: packing an
# element into the VNNI panels, and writing an fp32 C element through a tile of the transposed product
# (stored to the scratch, reloaded as vectors, 16 x 16 shuffled): 8x. Fitted on a Sapphire Rapids core
# (one thread, Dense K = 768, N = 2304, weight per call): the transposed product wins up to M ~ 90
# (M = 16: 1.3-1.6x, 32: 1.6x, 64: 1.1x, 128: 0.93x, 256: 0.82x).
PACK_COST = 1
TRANSPOSED_C_COST = 8


def transposed_pays(m, n, k, ar=IntArith()):
    """1 where C = A.B^T (A m x k, B n x k, B packed per call) costs less as its transpose C^T = B.A^T,
    else 0: B, read in place as A tiles, is not packed; A is, and C is written transposed. Pays for a
    small m (a Dense with few rows: the weight's pack was most of the call)."""
    transposed = ar.mul(m, ar.add(ar.mul(k, ar.const(PACK_COST)), ar.mul(n, ar.const(TRANSPOSED_C_COST))))
    return ar.if_at_most(transposed, ar.mul(ar.mul(n, k), ar.const(PACK_COST)), ar.const(1), ar.const(0))


def transposed_block_shape(aset: Bf16Set, m, n, ar=IntArith()) -> tuple:
    """(mc, nc) of a task of the transposed product (m: the rows of B read in place, n: the few rows of
    A, packed): all n columns in every task (splitting them would have each task read all of B), the m
    rows split evenly over the cores."""
    one, row = ar.const(1), ar.const(aset.mr)
    mc = ar.mul(ar.ceil_div(ar.ceil_div(ar.max(m, one), row), ar.const(aset.cores)), row)
    return mc, ar.round_up(ar.max(n, one), ar.const(aset.nr))
