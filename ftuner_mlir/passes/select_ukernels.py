"""ftuner-select-ukernels: attach the uKernel set chosen by the hardware model to each supported op."""
from __future__ import annotations

import dataclasses

import ml_dtypes
from mlir import ir
from mlir.dialects import arith, linalg, tensor

from ..ir.attributes import AMX_ATTR, ATTR, GPU_ATTR
from ..ir.build import collapse_shape, dim, expand_shape, extract_slice, family_matmul, insert_slice, widen
from ..ir.codecs import amx_set_to_attr, gpu_set_to_attr, ukernel_set_to_attr
from ..ir.match import classify, conv_gemm
from ..ir.resources import blob_constant, constant_array
from ..ir.walk import defining_op, walk
from ..lowering.dispatch.early_rounding import rounded_at_source
from ..tuning.db import chosen_tile
from ..ukernel.bf16_space import engine_in_use, select_bf16
from ..ukernel.gpu_space import select_gpu
from ..ukernel.space import RegisterTile, UKernelSet, select
from .base import MAX_FORCED_COLUMNS, MAX_FORCED_ROWS, ModulePass, option


@dataclasses.dataclass(frozen=True)
class SelectUKernels(ModulePass):
    name = "ftuner-select-ukernels"
    summary = ("Attach the uKernel set (attribute ftuner.ukernels) to each matmul-family op and each conv2d (the set "
               "of the GEMM it is tiled as): the measured best register tile from the tuning database when there "
               "is one, else the analytic best")
    mr: int = option(0, "force the body tile's rows (with nr; 0 = measured or analytic choice)", minimum=0,
                     maximum=MAX_FORCED_ROWS)
    nr: int = option(0, "force the body tile's columns (with mr)", minimum=0, maximum=MAX_FORCED_COLUMNS)
    tuning: bool = option(True, "use the tuning database (also off with FTUNER_NO_TUNING=1)")
    matmul_precision: str = option("f32", "bf16: fp32 matmuls run on the bf16 matrix engine (operands rounded to bf16, "
                                   "fp32 accumulation and result) where the target has a bf16 engine faster than its fp32 FMAs (AMX, or "
                                   "AVX512-BF16 on Zen 4/5); everything else stays fp32",
                                   choices=("f32", "bf16"))

    def tile_for(self, target, dtype: str) -> RegisterTile | None:
        try:
            tile = chosen_tile(target, dtype, self.mr, self.nr, self.tuning)
        except ValueError as err:
            raise ValueError(f"{self.name}: {err}") from None
        return RegisterTile(*tile) if tile else None

    def apply(self, module_op) -> None:
        target = self.resolved_target()
        if target.kind == "gpu":
            return self.run_gpu(module_op, target)
        for rewrite in (conv1d_as_conv2d, grouped_conv_as_convs, depthwise_as_taps):   # each may erase its op
            for op in list(walk(module_op)):
                rewrite(op)
        for op in list(walk(module_op)):
            read_transposed_operands(op)
        engine = engine_in_use(target)[0]
        if self.matmul_precision == "bf16" and engine != "none":
            rounded = _RoundedOnce()
            for op in [op for op in walk(module_op) if op.results and (classify(op) or ("", ""))[1] == "f32"]:
                retype_operands(op, classify(op)[0], lambda v, op=op: rounded(v, op.operation.block))
        for op, (family, dtype) in [(op, classify(op)) for op in walk(module_op) if classify(op)]:
            if dtype != "bf16" or not op.results or AMX_ATTR in op.attributes:
                continue
            if engine != "none":                        # AMX or AVX512-BF16 uKernels serve every matmul family
                op.attributes[AMX_ATTR] = amx_set_to_attr(select_bf16(target, family))
            else:                                       # no matrix engine for it (yet): the fp32 uKernels
                retype_operands(op, family, lambda v: widen(v, ir.F32Type.get()))
        cache: dict[tuple[str, str], UKernelSet] = {}
        for op in list(walk(module_op)):
            kind = classify(op) or conv_gemm(op)        # a conv2d gets the set of the GEMM it becomes
            if kind is None or kind[1] == "bf16" or not op.results or ATTR in op.attributes:
                continue                                # select on tensors only
            if kind not in cache:
                cache[kind] = select(target, *kind, tile=self.tile_for(target, kind[1]))
            op.attributes[ATTR] = ukernel_set_to_attr(cache[kind])

    def run_gpu(self, module_op, target) -> None:
        """fp32 ops get the GPU set of their family (the GPU uKernels are fp32 only)."""
        for op in list(walk(module_op)):
            kind = classify(op)
            if kind is None or not op.results or kind[1] != "f32" or GPU_ATTR in op.attributes:
                continue
            op.attributes[GPU_ATTR] = gpu_set_to_attr(select_gpu(target, kind[0]))


def retype_operands(op, family: str, convert) -> None:
    """The matmul `op` of family `family` on its A and B converted by `convert` (fp32 into the same C):
    bf16 operands widened to fp32 where no matrix engine serves them (exact), or fp32 ones rounded to
    bf16 for matmul_precision="bf16"."""
    with ir.InsertionPoint(op), op.location:
        a, b = (convert(v) for v in op.operands[:2])
        product = family_matmul(a, b, op.operands[2], family)
    op.results[0].replace_all_uses_with(product)
    op.operation.erase()


class _RoundedOnce:
    """Each value rounded to bf16 once per block: the query, key and value projections read one layer
    norm's output, rounded once, not three times (a pass over the activations each). Matmuls are
    visited in order, so the first rounding in a block comes before the later readers there."""

    def __init__(self):
        self.done: dict = {}

    def __call__(self, value: ir.Value, block) -> ir.Value:
        key = (value, block)
        if key not in self.done:
            self.done[key] = _rounded_to_bf16(value)
        return self.done[key]


def _rounded_to_bf16(value: ir.Value) -> ir.Value:
    """`value` rounded to bf16, to nearest even: a constant (a weight) once, here, the others on every call,
    where they are made (lowering/dispatch/early_rounding.py)."""
    array = constant_array(value)
    if array is None:
        return rounded_at_source(value)
    return blob_constant(array.astype(ml_dtypes.bfloat16), "bf16_weight", ir.BF16Type.get())


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
        sizes, inputs = _sizes(acc), []
        for i in range(kh):
            for j in range(kw):
                inputs.append(extract_slice(x, [0, 0, i * dilations[0], j * dilations[1]], sizes, t))
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
    fresh = tensor.EmptyOp([s if isinstance(s, int) else s for s in _sizes(acc)], t.element_type).result
    generic = linalg.GenericOp([acc.type], inputs + [acc], [fresh], maps, parallel)
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


def _sizes(value: ir.Value) -> list:
    """Each dim of a ranked tensor: its size, or a tensor.dim where dynamic."""
    shape = ir.RankedTensorType(value.type).shape
    return [size if size != ir.ShapedType.get_dynamic_size() else dim(value, axis) for axis, size in enumerate(shape)]


def _group_slice(value: ir.Value, g: int, axis: int) -> ir.Value:
    """Group g of a 5-D operand, its group dim (`axis`) merged into its neighbour: a unit slice viewed
    without it (the shape checks follow collapses, not rank-reducing slices)."""
    t = ir.RankedTensorType(value.type)
    sizes, offsets = _sizes(value), [0] * 5
    sizes[axis], offsets[axis] = 1, g
    shape = list(t.shape)
    shape[axis] = 1
    piece = extract_slice(value, offsets, sizes, ir.RankedTensorType.get(shape, t.element_type))
    return collapse_shape(piece, [[0, 1], [2], [3], [4]])


def _insert_group(conv: ir.Value, dest: ir.Value, g: int) -> ir.Value:
    """`conv` [N, F, OH, OW] as group g of `dest` [N, G, F, OH, OW]."""
    sizes = _sizes(conv)
    piece = expand_shape(conv, [[0, 1], [2], [3], [4]], [sizes[0], 1, *sizes[1:]])
    return insert_slice(piece, dest, [0, g, 0, 0, 0], [sizes[0], 1, *sizes[1:]])


def _unit_height(value: ir.Value) -> ir.Value:
    """[a, b, w] viewed as [a, b, 1, w]."""
    a, b, w = _sizes(value)
    return expand_shape(value, [[0], [1], [2, 3]], [a, b, 1, w])


def read_transposed_operands(op) -> None:
    """`linalg.matmul(A, linalg.transpose(W))` (torch-mlir's `x @ w.t()`, every Linear layer) becomes
    the transpose_b family member reading W as N x K: the transpose, a copy of the weight on every call,
    disappears (erased when nothing else reads it)."""
    kind = classify(op)
    if kind is None or kind[0] != "matmul" or not op.results:
        return
    producer = defining_op(op.operands[1])
    if producer is None or producer.name != "linalg.transpose" \
            or list(producer.attributes["permutation"]) != [1, 0]:
        return
    with ir.InsertionPoint(op), op.location:
        product = family_matmul(op.operands[0], producer.operands[0], op.operands[2], "matmul_transpose_b")
    op.results[0].replace_all_uses_with(product)
    op.operation.erase()
    if not list(producer.results[0].uses):
        producer.erase()
