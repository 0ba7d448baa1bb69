"""Recognize the matmul-family ops the uKernel passes handle, from their name and indexing maps."""
from __future__ import annotations

from mlir import ir

_MATMUL_MAPS = {
    ("(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d2, d1)", "(d0, d1, d2) -> (d0, d1)"): "matmul",
    ("(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d1, d2)", "(d0, d1, d2) -> (d0, d1)"): "matmul_transpose_b",
}
_BATCH_MAPS = {
    ("(d0, d1, d2, d3) -> (d0, d1, d3)", "(d0, d1, d2, d3) -> (d0, d3, d2)", "(d0, d1, d2, d3) -> (d0, d1, d2)"):
        "batch_matmul",
    ("(d0, d1, d2, d3) -> (d0, d1, d3)", "(d0, d1, d2, d3) -> (d0, d2, d3)", "(d0, d1, d2, d3) -> (d0, d1, d2)"):
        "batch_matmul_transpose_b",
}
_TABLES = {"linalg.matmul": _MATMUL_MAPS, "linalg.batch_matmul": _BATCH_MAPS}
ELEMENT_TYPES = {"f32", "f64"}


def indexing_maps(op) -> list[str] | None:
    if "indexing_maps" not in op.attributes:
        return None
    return [str(ir.AffineMapAttr(a).value) for a in ir.ArrayAttr(op.attributes["indexing_maps"])]


def classify(op) -> tuple[str, str] | None:
    """(family, element type) when `op` is a matmul-family op the passes can tile: on tensors (one
    result) or, after bufferization, on memrefs (no result)."""
    table = _TABLES.get(op.operation.name)
    if table is None or len(op.operands) != 3:
        return None
    types = [v.type for v in op.operands]
    on_tensors = all(isinstance(t, ir.RankedTensorType) for t in types) and len(op.results) == 1
    on_memrefs = all(isinstance(t, ir.MemRefType) for t in types) and not op.results
    if not (on_tensors or on_memrefs):
        return None
    elements = {str(t.element_type) for t in types}
    if len(elements) != 1 or not elements <= ELEMENT_TYPES:
        return None
    maps = indexing_maps(op)
    family = table.get(tuple(maps)) if maps else None
    if family is None:
        return None
    body = op.regions[0].blocks[0].operations if op.regions and len(op.regions[0].blocks) else []
    if [o.operation.name for o in body] not in (["arith.mulf", "arith.addf", "linalg.yield"], []):
        return None
    return family, elements.pop()
