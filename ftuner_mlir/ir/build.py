"""Small builder helpers the IR-emitting layers share (at the caller's insertion point and location)."""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from ..families import family
from .match import affine_maps

DYNAMIC = ir.ShapedType.get_dynamic_size()


def index(value: int) -> ir.Value:
    """An `arith.constant` of index type."""
    return arith.ConstantOp(ir.IndexType.get(), value).result


def dim(value: ir.Value, axis: int) -> ir.Value:
    """`tensor.dim` of a ranked tensor."""
    return tensor.DimOp(value, index(axis)).result


def loop_extent(op, loop: int) -> ir.Value:
    """The extent of a linalg op's loop `loop`, read from the first operand its indexing map reads with
    that plain dim (a constant when that dim of the operand is static)."""
    for operand, amap in zip(op.operands, affine_maps(op)):
        for position, expr in enumerate(amap.results):
            if isinstance(expr, ir.AffineDimExpr) and expr.position == loop:
                size = ir.ShapedType(operand.type).shape[position]
                return index(size) if size >= 0 else dim(operand, position)
    raise ValueError(f"no operand of {op.operation.name} is indexed by loop d{loop}")


def cast(value: ir.Value, to: ir.Type) -> ir.Value:
    """`value` as type `to` (a `tensor.cast` when the types differ)."""
    return value if value.type == to else tensor.CastOp(to, value).result


def reassociation(groups) -> ir.ArrayAttr:
    """The reassociation attribute of collapse_shape / expand_shape: groups of dims."""
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in g]) for g in groups])


def reassociation_groups(op) -> list[list[int]]:
    """The groups of dims of a collapse_shape / expand_shape (the inverse of `reassociation`)."""
    return [[int(ir.IntegerAttr(d).value) for d in g] for g in op.attributes["reassociation"]]


def family_matmul(a: ir.Value, b: ir.Value, acc: ir.Value, family_name: str) -> ir.Value:
    """A `linalg.matmul` with the indexing maps of matmul family `family_name` (matmul_transpose_b:
    B read as N x K)."""
    maps = [ir.AffineMapAttr(ir.Attribute.parse(f"affine_map<{m}>")).value for m in family(family_name).affine_maps()]
    return linalg.matmul(a, b, outs=[acc], indexing_maps=maps)
