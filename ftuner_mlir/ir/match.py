"""Recognize the ops of a registered family (families/) from their name and indexing maps."""
from __future__ import annotations

from mlir import ir

from ..families import CONV_FAMILIES, FAMILIES, Conv2dFamily

_BY_MAPS = {(f.op, f.affine_maps()): f.name for f in FAMILIES.values()}
ELEMENT_TYPES = {"f32", "f64"}
# A matmul of bf16 operands accumulating into fp32 (the matrix engines' form): element type "bf16"
MIXED_ELEMENT_TYPES = {("bf16", "bf16", "f32"): "bf16"}
_BODIES = {"f32": ["arith.mulf", "arith.addf", "linalg.yield"], "f64": ["arith.mulf", "arith.addf", "linalg.yield"],
           "bf16": ["arith.extf", "arith.extf", "arith.mulf", "arith.addf", "linalg.yield"]}


def indexing_maps(op) -> list[str] | None:
    if "indexing_maps" not in op.attributes:
        return None
    return [str(ir.AffineMapAttr(a).value) for a in ir.ArrayAttr(op.attributes["indexing_maps"])]


def affine_maps(op) -> list[ir.AffineMap]:
    """A linalg op's indexing maps, as maps."""
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]


def iterator_kinds(op) -> list[str]:
    """A linalg.generic's iterator types: "parallel" or "reduction", loop by loop."""
    return [str(ir.Attribute(a)).split("<")[-1].rstrip(">") for a in op.attributes["iterator_types"]]


def reads_output(op) -> bool:
    """Whether a single-output linalg op's body reads its output's current value (a reduction's
    accumulator, an in-place update), not only writes it."""
    return bool(list(op.regions[0].blocks[0].arguments[-1].uses))


def _element_type(types) -> str | None:
    """The one element type of `types`, when it is one the uKernels compute in."""
    elements = {str(t.element_type) for t in types}
    return elements.pop() if len(elements) == 1 and elements <= ELEMENT_TYPES else None


def _operands_element_type(types) -> str | None:
    """The element type a family op computes in: one shared type, or a MIXED_ELEMENT_TYPES form."""
    return _element_type(types) or MIXED_ELEMENT_TYPES.get(tuple(str(t.element_type) for t in types))


def classify(op) -> tuple[str, str] | None:
    """(family name, element type) when `op` is a family op the passes can tile: on tensors (one result)
    or, after bufferization, on memrefs (no result), with a plain multiply-add body (bf16 operands are
    widened to fp32 in it first)."""
    if len(op.operands) != 3:
        return None
    types = [v.type for v in op.operands]
    on_tensors = all(isinstance(t, ir.RankedTensorType) for t in types) and len(op.results) == 1
    on_memrefs = all(isinstance(t, ir.MemRefType) for t in types) and not op.results
    if not (on_tensors or on_memrefs):
        return None
    element = _operands_element_type(types)
    if element is None:
        return None
    maps = indexing_maps(op)
    family = _BY_MAPS.get((op.operation.name, tuple(maps))) if maps else None
    if family is None:
        return None
    body = op.regions[0].blocks[0].operations if op.regions and len(op.regions[0].blocks) else []
    if [o.operation.name for o in body] not in (_BODIES[element], []):
        return None
    return family, element


def _pair(op, name: str) -> tuple[int, int]:
    if name not in op.attributes:
        return (1, 1)
    values = [int(v) for v in ir.DenseIntElementsAttr(op.attributes[name])]
    return (values[0], values[-1]) if values else (1, 1)


def classify_conv(op) -> tuple[Conv2dFamily, tuple[int, int], tuple[int, int]] | None:
    """(family, strides, dilations) of a conv2d op of a registered layout, on tensors or memrefs."""
    fam = CONV_FAMILIES.get(op.operation.name)
    if fam is None or len(op.operands) != 3:
        return None
    return fam, _pair(op, "strides"), _pair(op, "dilations")


def conv_gemm(op) -> tuple[str, str] | None:
    """(GEMM family, element type) of a conv2d op the matmul uKernels can serve: on tensors, one element
    type (f32 or f64), the filter's dims static (the GEMM's K and N are then known at compile time)."""
    conv = classify_conv(op)
    if conv is None or len(op.results) != 1:
        return None
    types = [v.type for v in op.operands]
    if not all(isinstance(t, ir.RankedTensorType) for t in types):
        return None
    element = _element_type(types)
    if element is None or not ir.RankedTensorType(types[1]).has_static_shape:
        return None
    return conv[0].gemm, element
