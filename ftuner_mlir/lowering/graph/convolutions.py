"""Convolutions rewritten into the forms the fast paths serve, before the uKernels are selected
(ftuner-select-ukernels): torch's conv1d as a height-1 conv2d and a grouped conv as a conv2d per group
(both implicit GEMMs of the matmul uKernels), a depthwise conv as one elementwise sum over its window's
taps (vectorized by the row code). Left as they were, each ran as a naive loop nest."""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, linalg

from ...ir.build import collapse_shape, empty_like, expand_shape, extract_slice, insert_slice, sizes
from ...ir.walk import walk


def rewrite_convolutions(module_op) -> None:
    for rewrite in (conv1d_as_conv2d, grouped_conv_as_convs, depthwise_as_taps):   # each may erase its op
        for op in list(walk(module_op)):
            rewrite(op)


def conv1d_as_conv2d(op) -> None:
    """`linalg.conv_1d_ncw_fcw` (torch's Conv1d: audio feature encoders) becomes the conv2d of a height-1
    image, which the matmul uKernels serve through the implicit GEMM (conv1d itself ran as a naive loop
    nest: wav2vec2-base's feature encoder 20x slower than torch). Views only: each operand gets a unit
    dim, the result loses it."""
    if op.operation.name != "linalg.conv_1d_ncw_fcw" or len(op.results) != 1 \
            or not all(isinstance(v.type, ir.RankedTensorType) for v in op.operands):
        return
    strides, dilations = ([int(x) for x in ir.DenseIntElementsAttr(op.attributes[name])]
                          for name in ("strides", "dilations"))
    with ir.InsertionPoint(op), op.location:
        x, w, acc = (_unit_height(v) for v in op.operands)
        conv = linalg.conv_2d_nchw_fchw(x, w, outs=[acc], strides=[1, *strides], dilations=[1, *dilations])
        product = collapse_shape(conv, [[0], [1], [2, 3]])
    op.results[0].replace_all_uses_with(product)
    op.operation.erase()


MAX_GROUPS = 64          # a grouped conv with more groups stays one op,
MIN_GROUP_CHANNELS = 4   # and one with fewer input channels a group (depthwise: 1): a GEMM that thin wastes the uKernels


def grouped_conv_as_convs(op) -> None:
    """`linalg.conv_2d_ngchw_gfchw` (a grouped Conv: wav2vec2's positional convolution has 16 groups of 48
    channels) becomes one conv_2d_nchw_fchw per group, on slices of the input, weight and accumulator,
    inserted back into the result: each an implicit GEMM of the uKernels (the grouped op ran as a naive
    loop nest: 160 of wav2vec2-base's 200 ms at 2 layers, 16000 samples). Up to MAX_GROUPS groups of at
    least MIN_GROUP_CHANNELS input channels, static in the weight."""
    if op.operation.name != "linalg.conv_2d_ngchw_gfchw" or len(op.results) != 1 \
            or not all(isinstance(v.type, ir.RankedTensorType) for v in op.operands):
        return
    x, w, acc = op.operands
    groups, _, channels = ir.RankedTensorType(w.type).shape[:3]
    if not 0 < groups <= MAX_GROUPS or not channels >= MIN_GROUP_CHANNELS:     # dynamic sizes are negative
        return
    strides, dilations = ([int(v) for v in ir.DenseIntElementsAttr(op.attributes[name])]
                          for name in ("strides", "dilations"))
    with ir.InsertionPoint(op), op.location:
        result = acc
        for g in range(groups):
            xg, wg, ag = _group_slice(x, g, 1), _group_slice(w, g, 0), _group_slice(acc, g, 1)
            conv = linalg.conv_2d_nchw_fchw(xg, wg, outs=[ag], strides=strides, dilations=dilations)
            result = _insert_group(conv, result, g)
    op.results[0].replace_all_uses_with(result)
    op.operation.erase()


MAX_TAPS = 121           # a depthwise window up to 11 x 11 is unrolled into taps


def depthwise_as_taps(op) -> None:
    """`linalg.depthwise_conv_2d_nchw_chw` (ConvNeXt's 7x7 depthwise conv) becomes one elementwise
    generic over the output: acc + the sum over the window's taps of a shifted view of the input times
    the tap's weight per channel (a unit-stride view and a per-channel broadcast each), summed a window
    row at a time. The pipeline vectorizes that along the width; the named op ran as a naive loop nest
    (a [4, 96, 56, 56] 7x7 depthwise conv: 37 ms, torch 2.5 ms). Unit strides; any dilation."""
    if op.operation.name != "linalg.depthwise_conv_2d_nchw_chw" or len(op.results) != 1 \
            or not all(isinstance(v.type, ir.RankedTensorType) for v in op.operands):
        return
    x, k, acc = op.operands
    channels, kh, kw = ir.RankedTensorType(k.type).shape
    strides, dilations = ([int(v) for v in ir.DenseIntElementsAttr(op.attributes[name])]
                          for name in ("strides", "dilations"))
    if strides != [1, 1] or not (0 < kh and 0 < kw and kh * kw <= MAX_TAPS):
        return
    t = ir.RankedTensorType(acc.type)
    with ir.InsertionPoint(op), op.location:
        extent, inputs = sizes(acc), []
        for i in range(kh):
            for j in range(kw):
                inputs.append(extract_slice(x, [0, 0, i * dilations[0], j * dilations[1]], extent, t))
                inputs.append(extract_slice(k, [0, i, j], [channels, 1, 1],
                                            ir.RankedTensorType.get([channels, 1, 1], t.element_type)))
        result = _sum_of_taps(inputs, acc, kh, kw)
    op.results[0].replace_all_uses_with(result)
    op.operation.erase()


def _sum_of_taps(inputs: list, acc: ir.Value, kh: int, kw: int) -> ir.Value:
    """acc + sum over taps of view x weight: one parallel generic, a partial sum per window row. acc is an
    input, the result a fresh tensor: a generic that reads its output stays a scalar loop."""
    d = [ir.AffineExpr.get_dim(i) for i in range(4)]
    zero = ir.AffineExpr.get_constant(0)
    view, weight = ir.AffineMap.get(4, 0, d), ir.AffineMap.get(4, 0, [d[1], zero, zero])
    maps = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in [view, weight] * (kh * kw) + [view, view]])
    parallel = ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * 4)
    t = ir.RankedTensorType(acc.type)
    generic = linalg.GenericOp([acc.type], inputs + [acc], [empty_like(acc, t.element_type)], maps, parallel)
    block = generic.regions[0].blocks.append(*([t.element_type] * (len(inputs) + 2)))
    with ir.InsertionPoint(block):
        args = list(block.arguments)
        rows = []
        for i in range(kh):
            products = [arith.MulFOp(args[2 * n], args[2 * n + 1]).result for n in range(i * kw, (i + 1) * kw)]
            rows.append(_sum(products))
        linalg.YieldOp([_sum([args[-2]] + rows)])
    return generic.result


def _sum(values: list) -> ir.Value:
    total = values[0]
    for v in values[1:]:
        total = arith.AddFOp(total, v).result
    return total


def _group_slice(value: ir.Value, g: int, axis: int) -> ir.Value:
    """Group g of a 5-D operand, its group dim (`axis`) merged into its neighbour: a unit slice viewed
    without it (the shape checks follow collapses, not rank-reducing slices)."""
    t = ir.RankedTensorType(value.type)
    extent, offsets = sizes(value), [0] * 5
    extent[axis], offsets[axis] = 1, g
    shape = list(t.shape)
    shape[axis] = 1
    piece = extract_slice(value, offsets, extent, ir.RankedTensorType.get(shape, t.element_type))
    return collapse_shape(piece, [[0, 1], [2], [3], [4]])


def _insert_group(conv: ir.Value, dest: ir.Value, g: int) -> ir.Value:
    """`conv` [N, F, OH, OW] as group g of `dest` [N, G, F, OH, OW]."""
    n, *rest = sizes(conv)
    piece = expand_shape(conv, [[0, 1], [2], [3], [4]], [n, 1, *rest])
    return insert_slice(piece, dest, [0, g, 0, 0, 0], [n, 1, *rest])


def _unit_height(value: ir.Value) -> ir.Value:
    """[a, b, w] viewed as [a, b, 1, w]."""
    a, b, w = sizes(value)
    return expand_shape(value, [[0], [1], [2, 3]], [a, b, 1, w])
