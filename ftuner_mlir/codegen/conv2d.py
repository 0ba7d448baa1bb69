"""conv2d as a GEMM on the matmul uKernels (the im2col view, materialized): a linalg.generic gathers
the input under every filter tap into a patch matrix, the filter collapses to a GEMM operand without a
copy, and the products accumulate straight into the conv's init (the bias, or zeros), in its layout.

  NHWC / HWCF: patches [N*OH*OW, KH*KW*C] (rows: output pixels; a row copies contiguous C runs)
               x filter [KH*KW*C, F], accumulated into the output viewed as [N*OH*OW, F]
  NCHW / FCHW: per image n, filter [F, C*KH*KW] x patches [C*KH*KW, OH*OW] (a row copies contiguous
               OW runs at stride 1), accumulated into output[n] viewed as [F, OH*OW]; for small
               images (chosen at run time) patches [N*OH*OW, C*KH*KW] x filter^T, added transposed

Built with the MLIR Python builders at the conv's location, so a later diagnostic points at the user's
conv op."""
from __future__ import annotations

import dataclasses
import math

from mlir import ir
from mlir.dialects import arith, linalg, scf, tensor

from ..families import Conv2dFamily
from ..ir.attributes import ATTR, PARALLEL_OUTER_ATTR
from ..ir.build import (DYNAMIC, cast, collapse_shape, dim, expand_shape, extract_slice, family_matmul, float_constant,
                        index, insert_slice)
from ..ir.codecs import parallel_outer, ukernel_set_to_attr
from ..ukernel.space import UKernelSet


def _map(loops: int, exprs) -> ir.AffineMapAttr:
    return ir.AffineMapAttr.get(ir.AffineMap.get(loops, 0, list(exprs)))


def _dims(n: int):
    return [ir.AffineExpr.get_dim(i) for i in range(n)]


def _generic(inputs, output, maps, body) -> ir.Value:
    """A parallel linalg.generic whose body is `body(block arguments) -> yielded value`."""
    t = ir.RankedTensorType(output.type)
    op = linalg.GenericOp([t], inputs, [output], ir.ArrayAttr.get(maps),
                          ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * t.rank))
    block = op.regions[0].blocks.append(*[ir.RankedTensorType(v.type).element_type for v in inputs + [output]])
    with ir.InsertionPoint(block):
        linalg.YieldOp([body(*block.arguments)])
    return op.result


def _patches(fam: Conv2dFamily, x: ir.Value, sizes: dict, strides, dilations, order=None) -> ir.Value:
    """The im2col tensor, its dims in `order` (default `fam.patch_loops()`), gathered from the input;
    without the batch dim when `x` is one image (no "n" in `sizes`)."""
    order = tuple(name for name in order or fam.patch_loops() if name != "n" or "n" in sizes)
    d = dict(zip(order, _dims(len(order))))
    spatial = [d["oh"] * strides[0] + d["kh"] * dilations[0], d["ow"] * strides[1] + d["kw"] * dilations[1]]
    source = [*spatial, d["c"]] if fam.channels_last else [d["c"], *spatial]
    source = ([d["n"]] if "n" in d else []) + source
    element = ir.RankedTensorType(x.type).element_type
    empty = tensor.EmptyOp([sizes[name] for name in order], element).result
    return _generic([x], empty, [_map(len(order), source), _map(len(order), d.values())], lambda v, _out: v)


def _matmul(a: ir.Value, b: ir.Value, acc: ir.Value, ukernels: ir.Attribute, family_name: str = "matmul"):
    product = family_matmul(a, b, acc, family_name)
    product.owner.attributes[ATTR] = ukernels
    return product, product.owner


def _slice(value: ir.Value, n: ir.Value, shape: list, insert_into: ir.Value | None = None):
    """Image `n` of a [N, A, B] tensor as [A, B] (extract), or [A, B] `value` put back (insert)."""
    big = insert_into if insert_into is not None else value
    dims = [dim(big, 1), dim(big, 2)]
    sizes = [1] + [d if s == DYNAMIC else s for s, d in zip(shape, dims)]
    if insert_into is None:
        element = ir.RankedTensorType(value.type).element_type
        return extract_slice(value, [n, 0, 0], sizes, ir.RankedTensorType.get(shape, element))
    return insert_slice(value, insert_into, [n, 0, 0], sizes)


# NCHW output images of fewer pixels than this take the batched GEMM (rows: every image's pixels), more
# take one GEMM per image (columns: its pixels): 7x7 or 14x14 images would give per-image GEMMs of 49
# or 196 columns, remainder strips doing most of the work.
BATCHED_BELOW_PIXELS = 256


def emit_gemm(op, fam: Conv2dFamily, strides, dilations, ukernels: UKernelSet):
    """Insert the GEMM form of conv `op` before it: (the value that replaces the conv's result, the
    matmul ops, each carrying its uKernel set). The filter's dims must be static."""
    x, w, init = op.operands
    filt = ir.RankedTensorType(w.type)
    if fam.channels_last:
        kh, kw, c, f = filt.shape
        n, oh, ow = (_size(init, axis) for axis in (0, 1, 2))
    else:
        f, c, kh, kw = filt.shape
        n, oh, ow = (_size(init, axis) for axis in (0, 2, 3))
    conv = _Conv(fam, x, w, init, {"n": n, "oh": oh, "ow": ow, "kh": kh, "kw": kw, "c": c}, f, kh * kw * c,
                 strides, dilations, ukernels)
    if fam.channels_last:
        result, gemm = conv.nhwc()
        return result, [gemm]
    few = arith.CmpIOp(arith.CmpIPredicate.ult, _value(_product(oh, ow)), index(BATCHED_BELOW_PIXELS)).result
    branch = scf.IfOp(few, [op.results[0].type], has_else=True)
    gemms = []
    for block, form in ((branch.then_block, conv.nchw_batched), (branch.else_block, conv.nchw_per_image)):
        with ir.InsertionPoint(block):
            result, gemm = form()
            scf.YieldOp([cast(result, op.results[0].type)])
            gemms.append(gemm)
    return branch.results[0], gemms


def _size(value: ir.Value, axis: int):
    """Dim `axis` of a tensor: an int where its type has it static (the GEMM's shapes stay static then),
    else a `tensor.dim`."""
    size = ir.RankedTensorType(value.type).shape[axis]
    return dim(value, axis) if size == DYNAMIC else size


def _value(size) -> ir.Value:
    return index(size) if isinstance(size, int) else size


def _product(*sizes):
    """The product of sizes: an int when all are, else an index value."""
    if all(isinstance(s, int) for s in sizes):
        return math.prod(sizes)
    out = _value(sizes[0])
    for size in sizes[1:]:
        out = arith.MulIOp(out, _value(size)).result
    return out


class _Conv:
    """One conv op's operands and sizes, and the GEMM forms it can take."""

    def __init__(self, fam, x, w, init, sizes, f, k, strides, dilations, ukernels):
        self.fam, self.x, self.w, self.init, self.sizes = fam, x, w, init, sizes
        self.f, self.k, self.strides, self.dilations, self.ukernels = f, k, strides, dilations, ukernels
        self.element = ir.RankedTensorType(w.type).element_type

    def _set(self, family_name: str) -> ir.Attribute:
        return ukernel_set_to_attr(dataclasses.replace(self.ukernels, family=family_name))

    def nhwc(self):
        """[N, OH, OW, KH, KW, C] patches -> [N*OH*OW, K] x filter [K, F] into the output [N*OH*OW, F]."""
        f, s = self.f, self.sizes
        patches = _patches(self.fam, self.x, s, self.strides, self.dilations)
        a = collapse_shape(patches, [[0, 1, 2], [3, 4, 5]])
        acc = collapse_shape(self.init, [[0, 1, 2], [3]])
        product, gemm = _matmul(a, collapse_shape(self.w, [[0, 1, 2], [3]]), acc, self._set("matmul"))
        return expand_shape(product, [[0, 1, 2], [3]], [s["n"], s["oh"], s["ow"], f]), gemm

    def nchw_batched(self):
        """Patches [OH*N*OW, C*KH*KW] x filter [F, C*KH*KW]^T into zeros [OH*N*OW, F], added transposed
        onto the NCHW init in one pass. The rows go by output row first so the gather has a task per
        output row and the add one per filter, batch 1 included."""
        f, s = self.f, self.sizes
        patches = _patches(self.fam, self.x, s, self.strides, self.dilations, ("oh", "n", "ow", "c", "kh", "kw"))
        patches.owner.attributes[PARALLEL_OUTER_ATTR] = parallel_outer(2)   # a task per output row and image
        a = collapse_shape(patches, [[0, 1, 2], [3, 4, 5]])
        zero = float_constant(self.element)
        acc = linalg.fill(zero, outs=[tensor.EmptyOp([_product(s["n"], s["oh"], s["ow"]), f], self.element).result])
        product, gemm = _matmul(a, collapse_shape(self.w, [[0], [1, 2, 3]]), acc, self._set("matmul_transpose_b"),
                                "matmul_transpose_b")
        by_rows = expand_shape(product, [[0, 1, 2], [3]], [s["oh"], s["n"], s["ow"], f])
        d = _dims(4)          # (f, n, oh, ow): one task per filter
        added = _generic([by_rows], self.init, [_map(4, [d[2], d[1], d[3], d[0]]), _map(4, [d[1], d[0], d[2], d[3]])],
                         lambda v, out: arith.AddFOp(out, v).result)
        added.owner.attributes[PARALLEL_OUTER_ATTR] = parallel_outer(1)
        return added, gemm

    def nchw_per_image(self):
        """Per image: filter [F, C*KH*KW] x patches [C*KH*KW, OH*OW] accumulated into output[n] viewed as
        [F, OH*OW]; the image's patches stay in cache for its GEMM."""
        dyn, f, s, x = DYNAMIC, self.f, self.sizes, self.x
        acc_all = collapse_shape(self.init, [[0], [1], [2, 3]])
        image_shape = ir.RankedTensorType(acc_all.type).shape[1:]          # [F, OH*OW]
        a = collapse_shape(self.w, [[0], [1, 2, 3]])
        loop = scf.ForOp(index(0), _value(s["n"]), index(1), [acc_all])
        with ir.InsertionPoint(loop.body):
            image = loop.induction_variable
            acc = loop.inner_iter_args[0]
            x_shape = ir.RankedTensorType(x.type).shape
            sizes = [1] + [dim(x, i) if x_shape[i] == dyn else x_shape[i] for i in (1, 2, 3)]
            one = extract_slice(x, [image, 0, 0, 0], sizes, ir.RankedTensorType.get(x_shape[1:], self.element))
            patches = _patches(self.fam, one, {name: v for name, v in s.items() if name != "n"},
                               self.strides, self.dilations)
            patches.owner.attributes[PARALLEL_OUTER_ATTR] = parallel_outer(1)   # one task per channel
            b = collapse_shape(patches, [[0, 1, 2], [3, 4]])                  # [C, KH, KW, OH, OW] -> [K, OH*OW]
            product, gemm = _matmul(a, b, _slice(acc, image, image_shape), self._set("matmul"))
            scf.YieldOp([_slice(product, image, image_shape, insert_into=acc)])
        return expand_shape(loop.results[0], [[0], [1], [2, 3]], [s["n"], f, s["oh"], s["ow"]]), gemm
