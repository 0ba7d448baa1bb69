"""conv2d as a GEMM on the matmul uKernels (the im2col view, materialized): a linalg.generic gathers
the input under every filter tap into a patch matrix, the filter collapses to a GEMM operand without a
copy, and the products accumulate straight into the conv's init (the bias, or zeros), in its layout.

  NHWC / HWCF: patches [N*OH*OW, KH*KW*C] (rows: output pixels; a row copies contiguous C runs)
               x filter [KH*KW*C, F], accumulated into the output viewed as [N*OH*OW, F]
  NCHW / FCHW: per image n, filter [F, C*KH*KW] x patches [C*KH*KW, OH*OW] (a row copies contiguous
               OW runs at stride 1), accumulated into output[n] viewed as [F, OH*OW]

Built with the MLIR Python builders at the conv's location, so a later diagnostic points at the user's
conv op."""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, linalg, scf, tensor

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


def _patches(fam: Conv2dFamily, x: ir.Value, sizes: dict, strides, dilations) -> ir.Value:
    """The im2col tensor, its dims in `fam.patch_loops()` order, gathered from the input; without the
    batch dim when `x` is one image (no "n" in `sizes`)."""
    order = tuple(name for name in fam.patch_loops() if name != "n" or "n" in sizes)
    d = dict(zip(order, _dims(len(order))))
    spatial = [d["oh"] * strides[0] + d["kh"] * dilations[0], d["ow"] * strides[1] + d["kw"] * dilations[1]]
    source = [*spatial, d["c"]] if fam.channels_last else [d["c"], *spatial]
    source = ([d["n"]] if "n" in d else []) + source
    element = ir.RankedTensorType(x.type).element_type
    empty = tensor.EmptyOp([sizes[name] for name in order], element).result
    return _generic([x], empty, [_map(len(order), source), _map(len(order), d.values())], lambda v, _out: v)


def _collapse(value: ir.Value, groups, shape) -> ir.Value:
    element = ir.RankedTensorType(value.type).element_type
    return tensor.CollapseShapeOp(ir.RankedTensorType.get(shape, element), value, _reassociation(groups)).result


def _expand(value: ir.Value, groups, sizes: list) -> ir.Value:
    """`value` expanded to `sizes` (ints or index values)."""
    static = [s if isinstance(s, int) else ir.ShapedType.get_dynamic_size() for s in sizes]
    element = ir.RankedTensorType(value.type).element_type
    return tensor.ExpandShapeOp(ir.RankedTensorType.get(static, element), value, _reassociation(groups),
                                [s for s in sizes if not isinstance(s, int)], ir.DenseI64ArrayAttr.get(static)).result


def _matmul(a: ir.Value, b: ir.Value, acc: ir.Value, ukernels: ir.Attribute):
    maps = [ir.AffineMapAttr(ir.Attribute.parse(f"affine_map<{m}>")).value for m in family("matmul").affine_maps()]
    product = linalg.matmul(a, b, outs=[acc], indexing_maps=maps)
    product.owner.attributes["ftuner.ukernels"] = ukernels
    return product, product.owner


def _slice(value: ir.Value, n: ir.Value, shape: list, insert_into: ir.Value | None = None):
    """Image `n` of a [N, A, B] tensor as [A, B] (extract), or [A, B] `value` put back (insert)."""
    dyn = ir.ShapedType.get_dynamic_size()
    big = insert_into if insert_into is not None else value
    dims = [_dim(big, 1), _dim(big, 2)]
    static_sizes = [1] + [s if s != dyn else dyn for s in shape]
    sizes = [v for s, v in zip(shape, dims) if s == dyn]
    offsets = ir.DenseI64ArrayAttr.get([dyn, 0, 0])
    strides = ir.DenseI64ArrayAttr.get([1, 1, 1])
    if insert_into is None:
        element = ir.RankedTensorType(value.type).element_type
        return tensor.ExtractSliceOp(ir.RankedTensorType.get(shape, element), value, [n], sizes, [],
                                     offsets, ir.DenseI64ArrayAttr.get(static_sizes), strides).result
    return tensor.InsertSliceOp(value, insert_into, [n], sizes, [], offsets,
                                ir.DenseI64ArrayAttr.get(static_sizes), strides).result


def emit_gemm(op, fam: Conv2dFamily, strides, dilations, ukernels: ir.Attribute):
    """Insert the GEMM form of conv `op` before it (carrying the uKernel set `ukernels` on its matmul):
    (the value that replaces the conv's result, the matmul op). The filter's dims must be static."""
    x, w, init = op.operands
    filt = ir.RankedTensorType(w.type)
    dyn = ir.ShapedType.get_dynamic_size()
    if fam.channels_last:
        kh, kw, c, f = filt.shape
        n, oh, ow = _dim(init, 0), _dim(init, 1), _dim(init, 2)
    else:
        f, c, kh, kw = filt.shape
        n, oh, ow = _dim(init, 0), _dim(init, 2), _dim(init, 3)
    k = kh * kw * c
    sizes = {"n": n, "oh": oh, "ow": ow, "kh": kh, "kw": kw, "c": c}
    if fam.channels_last:                          # [N, OH, OW, KH, KW, C] -> [N*OH*OW, K]
        patches = _patches(fam, x, sizes, strides, dilations)
        a = _collapse(patches, [[0, 1, 2], [3, 4, 5]], [dyn, k])
        acc = _collapse(init, [[0, 1, 2], [3]], [dyn, f])
        product, gemm = _matmul(a, _collapse(w, [[0, 1, 2], [3]], [k, f]), acc, ukernels)
        return _expand(product, [[0, 1, 2], [3]], [n, oh, ow, f]), gemm
    # one image at a time: its patches (C*KH*KW x OH*OW) stay in cache for the GEMM that reads them
    acc_all = _collapse(init, [[0], [1], [2, 3]], [dyn, f, dyn])
    a = _collapse(w, [[0], [1, 2, 3]], [f, k])
    index = ir.IndexType.get()
    loop = scf.ForOp(arith.ConstantOp(index, 0).result, n, arith.ConstantOp(index, 1).result, [acc_all])
    with ir.InsertionPoint(loop.body):
        image = loop.induction_variable
        acc = loop.inner_iter_args[0]
        x_shape = ir.RankedTensorType(x.type).shape
        one = tensor.ExtractSliceOp(ir.RankedTensorType.get(x_shape[1:], filt.element_type), x, [image],
                                    [_dim(x, i) for i in (1, 2, 3) if x_shape[i] == dyn], [],
                                    ir.DenseI64ArrayAttr.get([dyn, 0, 0, 0]), ir.DenseI64ArrayAttr.get([1] + x_shape[1:]),
                                    ir.DenseI64ArrayAttr.get([1, 1, 1, 1])).result
        patches = _patches(fam, one, {name: v for name, v in sizes.items() if name != "n"}, strides, dilations)
        patches.owner.attributes["ftuner.parallel_outer"] = ir.UnitAttr.get()   # one task per channel
        b = _collapse(patches, [[0, 1, 2], [3, 4]], [k, dyn])        # [C, KH, KW, OH, OW] -> [K, OH*OW]
        product, gemm = _matmul(a, b, _slice(acc, image, [f, dyn]), ukernels)
        scf.YieldOp([_slice(product, image, [f, dyn], insert_into=acc)])
    return _expand(loop.results[0], [[0], [1], [2, 3]], [n, f, oh, ow]), gemm
