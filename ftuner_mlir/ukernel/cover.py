"""How a uKernel set covers one concrete shape. The same arithmetic is emitted into the dispatch code
(see codegen/matmul.py), so the report describes what the compiled code does."""
from __future__ import annotations

import dataclasses
from collections import Counter

from .space import UKernelSet


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def round_up(a: int, b: int) -> int:
    return ceil_div(a, b) * b


TASKS_PER_CORE = 4         # a core slowed by a neighbour hands its tasks to the others
MIN_TASK_STRIPS = 4        # columns of a task: at least this many body tiles


class IntArith:
    """Index arithmetic on Python ints. The dispatch code runs the same formulas on IR values (an
    arithmetic with these methods that emits ops: codegen/matmul.py), so both agree by construction."""

    const = staticmethod(lambda v: v)
    ceil_div = staticmethod(ceil_div)
    max = staticmethod(max)
    min = staticmethod(min)
    mul = staticmethod(lambda a, b: a * b)
    floor_div = staticmethod(lambda a, b: a // b)
    if_at_most = staticmethod(lambda a, b, then, otherwise: then if a <= b else otherwise)

    add = staticmethod(lambda a, b: a + b)
    sub = staticmethod(lambda a, b: a - b)
    rem = staticmethod(lambda a, b: a % b)
    bit_and = staticmethod(lambda a, b: a & b)

    def round_up(self, a, b):
        return self.mul(self.ceil_div(a, b), b)


def block_shape(uks: UKernelSet, batch, m, n, ar=IntArith()) -> tuple:
    """Cache block chosen at run time: balanced rows, then enough column blocks to occupy every core.
    With few columns (at most four strips per core) and no B to pack (B stored K x N), rows are split
    over the cores first: column blocks balance only to `nr` columns (196 columns on 2 cores: 128 + 68),
    row blocks to a row tile. With many columns, splitting rows would make each task re-read B."""
    one, mr, nr, cores = ar.const(1), ar.const(uks.mr), ar.const(uks.nr), ar.const(uks.cores)
    blocks_m = ar.max(ar.ceil_div(m, ar.const(uks.mc)), one)
    if not uks.transpose_b:
        spread = ar.min(ar.ceil_div(cores, ar.max(batch, one)), ar.floor_div(m, mr))
        few_columns = ar.const(4 * uks.cores * uks.nr)
        blocks_m = ar.max(blocks_m, ar.if_at_most(n, few_columns, spread, one))
    mc = ar.max(ar.round_up(ar.ceil_div(m, blocks_m), mr), mr)
    tasks_m = ar.mul(ar.max(batch, one), blocks_m)
    # enough tasks for the cores to balance each other (TASKS_PER_CORE each, taken dynamically), while
    # column blocks stay at least MIN_TASK_STRIPS register tiles wide
    wanted = ar.min(ar.ceil_div(ar.const(TASKS_PER_CORE * uks.cores), tasks_m),
                    ar.max(ar.floor_div(n, ar.const(MIN_TASK_STRIPS * uks.nr)), one))
    blocks_n = ar.max(ar.max(ar.ceil_div(n, ar.const(uks.nc)), ar.max(ar.ceil_div(cores, tasks_m), wanted)), one)
    # whole waves: make the task count a multiple of the cores where that is one more column block
    blocks_n = ar.ceil_div(ar.round_up(ar.mul(tasks_m, blocks_n), cores), tasks_m)
    nc = ar.max(ar.round_up(ar.ceil_div(n, blocks_n), nr), nr)
    return mc, nc


MASKED = 0      # the strip size of a masked tail in strip_bounds


def strip_bounds(extent, sizes: tuple[int, ...], tail: int = 1, ar=IntArith()) -> list[tuple]:
    """(size, lo, hi) per strip size, covering [0, extent) exactly: [0, body) in body strips, then one
    range per binary digit of the rest (empty or one strip); with tail > 1, last the range of the masked
    tail (size MASKED), fewer than `tail` elements. The row and column loops of the generated code are
    these ranges (codegen/matmul.py runs it on IR values)."""
    body = ar.const(sizes[0])
    rest = ar.rem(extent, body)
    lo = ar.sub(extent, rest)
    ranges = [(sizes[0], ar.const(0), lo)]
    for size in sizes[1:]:
        hi = ar.add(lo, ar.bit_and(rest, ar.const(size)))
        ranges.append((size, lo, hi))
        lo = hi
    if tail > 1:
        ranges.append((MASKED, lo, extent))
    return ranges


def strips(extent: int, sizes: tuple[int, ...], tail: int = 1) -> list[tuple[int, int]]:
    """(size, count) strips covering `extent` exactly (strip_bounds): body strips, one per binary digit
    of the rest down to `tail`, then (with tail > 1) one masked strip of the last `extent % tail`."""
    out = []
    for size, lo, hi in strip_bounds(extent, sizes, tail):
        if size != MASKED:
            out.append((size, (hi - lo) // size))
        elif hi > lo:
            out.append((hi - lo, 1))
    return out


@dataclasses.dataclass
class Coverage:
    shape: tuple[int, int, int, int]      # batch, m, n, k
    block: tuple[int, int]
    blocks: int
    tiles: Counter                         # (rows, cols) -> tile count (all blocks, one k pass)
    useful_flops: int
    executed_flops: int

    @property
    def padded_fraction(self) -> float:
        return (self.executed_flops - self.useful_flops) / self.useful_flops if self.useful_flops else 0.0

    def blocks_per_core(self, cores: int) -> tuple[int, float]:
        """(max blocks on one core, wave efficiency = blocks / (waves * cores))."""
        waves = ceil_div(self.blocks, cores) if self.blocks else 0
        return waves, (self.blocks / (waves * cores) if waves else 1.0)


def _extent_blocks(extent: int, block: int) -> Counter:
    """Block sizes along one axis: full blocks plus one partial."""
    c = Counter()
    if extent:
        c[block] += extent // block
        if extent % block:
            c[extent % block] += 1
    return c


def cover(uks: UKernelSet, batch: int, m: int, n: int, k: int) -> Coverage:
    mc, nc = block_shape(uks, batch, m, n)
    tiles = Counter()
    rows_by_block = _extent_blocks(m, mc)
    cols_by_block = _extent_blocks(n, nc)
    for bm, count_m in rows_by_block.items():
        for bn, count_n in cols_by_block.items():
            for sm, cnt_m in strips(bm, uks.row_sizes):
                for sn, cnt_n in strips(bn, uks.col_sizes, uks.tail_width):
                    if cnt_m and cnt_n:
                        tiles[(sm, sn)] += cnt_m * cnt_n * count_m * count_n * batch
    executed = sum(2 * sm * sn * k * cnt for (sm, sn), cnt in tiles.items())
    blocks = batch * sum(rows_by_block.values()) * sum(cols_by_block.values())
    return Coverage((batch, m, n, k), (mc, nc), blocks, tiles, 2 * batch * m * n * k, executed)
