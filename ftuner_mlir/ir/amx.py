"""Builders for the `amx` dialect's ops (MLIR 22 registers the dialect but ships no Python module for
it), at the caller's insertion point and location. Tiles are values of `!amx.tile<rows x cols x elt>`;
loads and stores address a memref whose last dim has unit stride, rows its row stride apart."""
from __future__ import annotations

from mlir import ir


def tile_type(rows: int, cols: int, element: str) -> ir.Type:
    return ir.Type.parse(f"!amx.tile<{rows}x{cols}x{element}>")


def tile_load(tile: ir.Type, base: ir.Value, indices) -> ir.Value:
    """The tile at `indices` of `base` (its first element; rows follow base's row stride)."""
    indices = list(indices)
    return ir.Operation.create("amx.tile_load", results=[tile], operands=[base, *indices],
                               attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, len(indices), 0])}
                               ).results[0]


def tile_store(base: ir.Value, indices, value: ir.Value) -> None:
    indices = list(indices)
    ir.Operation.create("amx.tile_store", results=[], operands=[base, *indices, value],
                        attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, len(indices), 1, 0])})


def tile_zero(tile: ir.Type) -> ir.Value:
    return ir.Operation.create("amx.tile_zero", results=[tile]).results[0]


def tile_mulf(a: ir.Value, b: ir.Value, acc: ir.Value) -> ir.Value:
    """acc + a.b: a [rows x 2k] bf16 tile, b [k x 2n] VNNI pairs, acc [rows x n] fp32 (tdpbf16ps)."""
    return ir.Operation.create("amx.tile_mulf", results=[acc.type], operands=[a, b, acc]).results[0]
