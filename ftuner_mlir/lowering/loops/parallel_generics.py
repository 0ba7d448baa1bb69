"""Elementwise ops and row reductions of the public functions run over the cores when they are big.

torch-mlir's exports hold dozens of `linalg.generic`s per transformer layer (bias, GELU, residual,
layernorm, softmax parts): on one core they were a third of a BERT layer's time. Each such op is
tiled into an `scf.forall` over its leading parallel dims (the innermost dim stays whole, so its loop
vectorizes), one row per iteration; OpenMP hands each core a contiguous range of rows. Small ops
would spend more on waking the worker threads than they save, so the parallel version runs only when
the op's iteration space has at least PARALLEL_MIN_ELEMENTS points: `scf.if` chooses at run time
between it and the original op.
"""
from __future__ import annotations

import json

from mlir import ir
from mlir.dialects import arith, scf

from ...ir.attributes import ROW_CHAIN_ATTR, TILES_ATTR
from ...ir.build import index, loop_extent
from ...ir.match import iterator_kinds
from ...ir.walk import public_functions, walk
from ..transform import apply_script, transform_script
from .row_reductions import carry_row_accumulators

PARALLEL_MIN_ELEMENTS = 1 << 15


def _row_tiles(op) -> list[int] | None:
    """Tile size 1 for every leading parallel dim but the innermost loop, 0 elsewhere; None when the op
    has no such dim."""
    kinds = iterator_kinds(op)
    tiles = []
    for kind in kinds[:-1]:
        if kind != "parallel":
            break
        tiles.append(1)
    return tiles + [0] * (len(kinds) - len(tiles)) if tiles else None


def _candidate(op) -> bool:
    """A generic on tensors with rows to split. Its body may assert (a gather checking its ids): the
    workers report a failure to the status of the call they serve (llvm/asserts.py), and row_vectors.py
    checks a row's asserts once, not per element (GPT-2's word embedding at b16 T=128: 3.9 ms scalar)."""
    if op.operation.name != "linalg.generic" or not op.results or TILES_ATTR in op.attributes \
            or ROW_CHAIN_ATTR in op.attributes:
        return False
    return _row_tiles(op) is not None


def _iteration_points(op) -> ir.Value:
    """The size of the op's iteration space: the product of its loops' extents."""
    points = index(1)
    for loop in range(len(iterator_kinds(op))):
        points = arith.MulIOp(points, loop_extent(op, loop)).result
    return points


def _guard(op, tiles: list[int]) -> None:
    """op -> scf.if (points >= PARALLEL_MIN_ELEMENTS) { op marked for tiling } else { op }."""
    with ir.InsertionPoint(op), op.location:
        points = _iteration_points(op)
        big = arith.CmpIOp(arith.CmpIPredicate.uge, points, index(PARALLEL_MIN_ELEMENTS)).result
        choice = scf.IfOp(big, [r.type for r in op.results], has_else=True)
    for old, new in zip(op.results, choice.results):
        old.replace_all_uses_with(new)
    with ir.InsertionPoint(choice.then_block), op.location:
        parallel = op.operation.clone()
        parallel.attributes[TILES_ATTR] = ir.Attribute.parse(json.dumps(tiles))
        scf.YieldOp(list(parallel.results))
    with ir.InsertionPoint(choice.else_block), op.location:
        serial_yield = scf.YieldOp(list(op.results))
    op.operation.move_before(serial_yield)


def guard_parallel_generics(module_op) -> list[list[int]]:
    """Mark (and guard) the public functions' big generics; the distinct tile lists marked."""
    marked = []
    for fn in public_functions(module_op):
        for op in [op for op in walk(fn) if _candidate(op)]:
            tiles = _row_tiles(op)
            _guard(op, tiles)
            if tiles not in marked:
                marked.append(tiles)
    return marked


def tile_script(tile_lists: list[list[int]]) -> str:
    """The transform body tiling each marked generic into an scf.forall with its tile list."""
    parts = []
    for number, tiles in enumerate(tile_lists):
        sizes = json.dumps(tiles)
        parts.append(
            f"    %g{number} = transform.structured.match ops{{[\"linalg.generic\"]}} "
            f"attributes{{{TILES_ATTR} = {sizes}}} in %root : (!transform.any_op) -> !transform.any_op\n"
            f"    transform.foreach %g{number} : !transform.any_op {{\n"
            f"    ^bb0(%op: !transform.any_op):\n"
            f"      %tiled, %loop = transform.structured.tile_using_forall %op tile_sizes {sizes}\n"
            f"          : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n"
            f"    }}\n")
    return "".join(parts)


def parallelize_generics(module_op, vector_bits: int) -> None:
    """The public functions' big elementwise ops and reductions over the cores (above),
    their rows as `vector_bits`-wide vector code where they can be (row_vectors.py)."""
    tile_lists = guard_parallel_generics(module_op)
    if tile_lists:
        apply_script(transform_script(tile_script(tile_lists)), module_op)
        carry_row_accumulators(module_op, TILES_ATTR, vector_bits)
