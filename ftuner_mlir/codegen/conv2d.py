"""conv2d as a GEMM on the matmul uKernels (the implicit-GEMM view, materialized): an im2col
linalg.generic gathers each output pixel's window into one row of a patch matrix, the filter collapses
to the GEMM's B operand without a copy, and the product expands back to the output's shape.

  NHWC / HWCF: patches [N*OH*OW, KH*KW*C] x filter [KH*KW*C, F] accumulate into the output [N*OH*OW, F]
  NCHW / FCHW: patches [N*OH*OW, C*KH*KW] x filter [F, C*KH*KW]^T into a zeroed [N*OH*OW, F], then one
               pass adds it, transposed to NCHW, onto the conv's init (the bias, or zeros)

Built with the MLIR Python builders at the conv's location, so a later diagnostic points at the user's
conv op."""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from ..families import Conv2dFamily, family


def _map(loops: int, exprs) -> ir.AffineMapAttr:
    return ir.AffineMapAttr.get(ir.AffineMap.get(loops, 0, list(exprs)))


def _dims(n: int):
    return [ir.AffineExpr.get_dim(i) for i in range(n)]


def _reassociation(groups) -> ir.ArrayAttr:
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in g]) for g in groups])


def _dim(value: ir.Value, axis: int) -> ir.Value:
    return tensor.DimOp(value, arith.ConstantOp(ir.IndexType.get(), axis).result).result


def _generic(inputs, output, maps, body) -> ir.Value:
    """A parallel linalg.generic whose body is `body(block arguments) -> yielded value`."""
    t = ir.RankedTensorType(output.type)
    op = linalg.GenericOp([t], inputs, [output], ir.ArrayAttr.get(maps),
                          ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * t.rank))
    block = op.regions[0].blocks.append(*[ir.RankedTensorType(v.type).element_type for v in inputs + [output]])
    with ir.InsertionPoint(block):
        linalg.YieldOp([body(*block.arguments)])
    return op.result


def _patches(fam: Conv2dFamily, x: ir.Value, n, oh, ow, window: dict[str, int], strides, dilations) -> ir.Value:
    """The im2col tensor [N, OH, OW, <window loops in the filter's order>] gathered from the input."""
    order = ("n", "oh", "ow") + fam.patch_order()
    at = {name: i for i, name in enumerate(order)}
    d = _dims(len(order))
    spatial = [d[at["oh"]] * strides[0] + d[at["kh"]] * dilations[0],
               d[at["ow"]] * strides[1] + d[at["kw"]] * dilations[1]]
    source = [d[at["n"]], *spatial, d[at["c"]]] if fam.channels_last else [d[at["n"]], d[at["c"]], *spatial]
    element = ir.RankedTensorType(x.type).element_type
    sizes = [n, oh, ow] + [window[name] for name in fam.patch_order()]
    empty = tensor.EmptyOp(sizes, element).result
    return _generic([x], empty, [_map(len(order), source), _map(len(order), d)], lambda v, _out: v)


def _collapse(value: ir.Value, groups, shape) -> ir.Value:
    element = ir.RankedTensorType(value.type).element_type
    return tensor.CollapseShapeOp(ir.RankedTensorType.get(shape, element), value, _reassociation(groups)).result


def emit_gemm(op, fam: Conv2dFamily, strides, dilations, ukernels: ir.Attribute):
    """Insert the GEMM form of conv `op` before it (carrying the uKernel set `ukernels` on its matmul):
    (the value that replaces the conv's result, the matmul op). The filter's dims must be static."""
    x, w, init = op.operands
    filt = ir.RankedTensorType(w.type)
    element = filt.element_type
    dyn = ir.ShapedType.get_dynamic_size()
    if fam.channels_last:
        kh, kw, c, f = filt.shape
        n, oh, ow = _dim(init, 0), _dim(init, 1), _dim(init, 2)
    else:
        f, c, kh, kw = filt.shape
        n, oh, ow = _dim(init, 0), _dim(init, 2), _dim(init, 3)
    k = kh * kw * c
    patches = _collapse(_patches(fam, x, n, oh, ow, {"kh": kh, "kw": kw, "c": c}, strides, dilations),
                        [[0, 1, 2], [3, 4, 5]], [dyn, k])
    gemm = family(fam.gemm)
    maps = [ir.AffineMapAttr(ir.Attribute.parse(f"affine_map<{m}>")).value for m in gemm.affine_maps()]
    if fam.channels_last:
        b = _collapse(w, [[0, 1, 2], [3]], [k, f])
        acc = _collapse(init, [[0, 1, 2], [3]], [dyn, f])
    else:
        b = _collapse(w, [[0], [1, 2, 3]], [f, k])
        rows = arith.MulIOp(arith.MulIOp(n, oh).result, ow).result
        zero = arith.ConstantOp(element, ir.FloatAttr.get(element, 0.0)).result
        acc = linalg.fill(zero, outs=[tensor.EmptyOp([rows, f], element).result])
    product = linalg.matmul(patches, b, outs=[acc], indexing_maps=maps)
    product.owner.attributes["ftuner.ukernels"] = ukernels
    # tensor.reshape, not expand_shape: memref.expand_shape lowers one dynamic size per group only
    shape = tensor.FromElementsOp(ir.RankedTensorType.get([4], ir.IndexType.get()),
                                  [n, oh, ow, arith.ConstantOp(ir.IndexType.get(), f).result]).result
    expanded = tensor.ReshapeOp(ir.RankedTensorType.get([dyn, dyn, dyn, f], element), product, shape).result
    if fam.channels_last:
        return expanded, product.owner
    d = _dims(4)          # (n, f, oh, ow): add the NHWC product onto the NCHW init
    return _generic([expanded], init, [_map(4, [d[0], d[2], d[3], d[1]]), _map(4, d)],
                    lambda v, out: arith.AddFOp(out, v).result), product.owner
