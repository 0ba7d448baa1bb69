"""memref.expand_shape with several dynamic sizes in one group, as a reinterpret_cast.

MLIR 22's expand-strided-metadata asserts on such an expand ("at most one dynamic size per group"):
splitting conv2d's GEMM rows (n*oh*ow) back into n, oh, ow is one. The strides follow from the source's
stride and the sizes inside the group, exactly as expand_shape defines them."""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, memref

from ...ir.build import DYNAMIC, index, reassociation_groups
from ...ir.walk import walk


def _dynamic_groups(op) -> bool:
    static = list(op.attributes["static_output_shape"])
    return any(sum(static[d] == DYNAMIC for d in g) > 1 for g in reassociation_groups(op))


def _rewrite(op) -> None:
    source = op.operands[0]
    result_type = ir.MemRefType(op.results[0].type)
    static = list(op.attributes["static_output_shape"])
    dynamic = iter(list(op.operands)[1:])
    groups = reassociation_groups(op)
    with ir.InsertionPoint(op), op.location:
        meta = memref.ExtractStridedMetadataOp(source)
        base, offset, source_strides = meta.results[0], meta.results[1], list(meta.results)[2 + len(groups):]
        sizes = [next(dynamic) if s == DYNAMIC else index(s) for s in static]
        strides = [None] * len(static)
        for group, stride in zip(groups, source_strides):
            for d in reversed(group):
                strides[d] = stride
                stride = arith.MulIOp(stride, sizes[d]).result
        # the cast's static parts are the result type's; only its dynamic ones take the values computed here
        want_strides, want_offset = result_type.get_strides_and_offset()
        dyn_stride = ir.ShapedType.get_dynamic_stride_or_offset()
        offsets = [offset] if want_offset == dyn_stride else []
        dyn_sizes = [v for s, v in zip(result_type.shape, sizes) if s == DYNAMIC]
        dyn_strides = [v for s, v in zip(want_strides, strides) if s == dyn_stride]
        cast = memref.ReinterpretCastOp(result_type, base, offsets, dyn_sizes, dyn_strides,
                                        ir.DenseI64ArrayAttr.get([want_offset]),
                                        ir.DenseI64ArrayAttr.get(list(result_type.shape)),
                                        ir.DenseI64ArrayAttr.get(list(want_strides)))
    op.results[0].replace_all_uses_with(cast.result)
    op.operation.erase()


def lower_dynamic_expand_shapes(module_op) -> None:
    for op in [o for o in walk(module_op) if o.operation.name == "memref.expand_shape" and _dynamic_groups(o)]:
        _rewrite(op)
