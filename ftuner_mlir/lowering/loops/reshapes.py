"""A `tensor.reshape` that only splits or merges neighbouring dims becomes `tensor.expand_shape` or
`tensor.collapse_shape`, which bufferize to views.

torch-mlir exports every `view(...)` with an inferred (-1) size as a `tensor.reshape` to a shape built
with `tensor.from_elements`. `memref.reshape` needs a source of the identity layout, so bufferization
copies a strided source into a fresh buffer first: in GPT-2 the query, key and value are column slices
of the fused QKV result, and each [B, T, 768] slice was copied before its [B, T, 12, 64] reshape and
then copied again by the head transpose (three copies per layer; BERT copies one dispatch result so).
An expand_shape of a slice is a view, and the transpose reads it in place.

When the shape operand's values cannot be proven, the dims still can: both sides fall into neighbouring
groups, one dim on the side of fewer dims to a run of dims on the other, whose static sizes have equal
products, except for at most one group holding one dynamic dim on each side. Both sides hold the same
number of elements (a reshape's definition), so that group's sizes agree as well, whatever the shape
operand computes. A static size 0 would make the count say nothing: such reshapes are left alone.

With batch and length both dynamic, the rows of a linear ([B*T, N] -> [B, T, N]) are one dynamic dim
on one side and a group of several on the other: when the side of fewer dims has one dynamic dim, its
static dims before and after it match runs of the other side by their products, and the dynamic dim
takes every dim between, whatever they hold; their sizes are the shape operand's (an expand's).
The rest are left alone (the attention scores' [B*H, T, T] -> [B, H, T, T] has two dynamic groups;
reshape_copies.py reads those in place after bufferization where it can).
"""
from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, tensor

from ...ir.build import DYNAMIC, collapse_shape, dim, expand_shape, index
from ...ir.walk import walk


def _groups(fewer: list[int], more: list[int]) -> list[list[int]] | None:
    """For each dim of `fewer`, the run of `more`'s dims it holds, or None when the sizes do not prove
    it (see the module docstring). A dynamic dim takes the static dims before it and one dynamic dim."""
    groups, j = [], 0
    for size in fewer:
        group = []
        if size == DYNAMIC:
            while j < len(more) and more[j] != DYNAMIC:
                group.append(j)
                j += 1
            if j == len(more):
                return None
            group.append(j)
            j += 1
        else:
            product = 1
            while j < len(more) and more[j] != DYNAMIC and (product < size or not group):
                product *= more[j]
                group.append(j)
                j += 1
            if product != size:
                return None
        groups.append(group)
    # dims left over: size-1 dims join any group, static ones the dynamic group (whose count absorbs them)
    rest = more[j:]
    if rest and (DYNAMIC in rest or not groups or
                 (any(s != 1 for s in rest) and fewer[-1] != DYNAMIC)):
        return None
    if groups:
        groups[-1].extend(range(j, len(more)))
    dynamic_groups = sum(any(more[d] == DYNAMIC for d in g) for g in groups)
    return groups if dynamic_groups <= 1 else None


def _one_dynamic_group(fewer: list[int], more: list[int]) -> list[list[int]] | None:
    """When `fewer` has one dynamic dim: its static dims before it match runs of `more` from the front,
    those after it runs from the back (by products), and the dynamic dim takes every dim between."""
    if fewer.count(DYNAMIC) != 1:
        return None
    k = fewer.index(DYNAMIC)
    head = _static_runs(fewer[:k], more)
    tail = _static_runs(fewer[k + 1:][::-1], more[::-1])
    if head is None or tail is None:
        return None
    first = sum(map(len, head))
    last = len(more) - sum(map(len, tail))
    if first >= last:
        return None
    tail = [[len(more) - 1 - d for d in reversed(group)] for group in reversed(tail)]
    return head + [list(range(first, last))] + tail


def _static_runs(sizes: list[int], more: list[int]) -> list[list[int]] | None:
    """For each static size in turn, the next run of `more`'s static dims with that product."""
    groups, j = [], 0
    for size in sizes:
        group, product = [], 1
        while j < len(more) and more[j] != DYNAMIC and (product < size or not group):
            product *= more[j]
            group.append(j)
            j += 1
        if product != size or not group:
            return None
        groups.append(group)
    return groups


def _rewrite(reshape) -> None:
    source, result = reshape.operands[0], reshape.results[0]
    src_shape = list(ir.RankedTensorType(source.type).shape)
    res_shape = list(ir.RankedTensorType(result.type).shape)
    if 0 in src_shape or 0 in res_shape:
        return
    if src_shape == res_shape:
        if source.type == result.type:
            result.replace_all_uses_with(source)
            reshape.erase()
        return
    if len(res_shape) == len(src_shape):
        return
    expanding = len(res_shape) > len(src_shape)
    fewer, more = (src_shape, res_shape) if expanding else (res_shape, src_shape)
    groups = _groups(fewer, more) or _one_dynamic_group(fewer, more)
    if groups is None:
        return
    with ir.InsertionPoint(reshape), reshape.location:
        if expanding:
            view = expand_shape(source, groups, _expanded_sizes(reshape, src_shape, res_shape, groups))
        else:
            view = collapse_shape(source, groups, res_shape)
    if view.type != result.type:
        return        # defensive: the groups always reproduce the type
    result.replace_all_uses_with(view)
    reshape.erase()


def _expanded_sizes(reshape, src_shape, res_shape, groups) -> list:
    """The result's sizes: its static ones, and the dynamic group's: one dynamic size = the source's
    dim / the product of the group's static sizes; several: the shape operand's."""
    source = reshape.operands[0]
    sizes = list(res_shape)
    for d, group in enumerate(groups):
        if src_shape[d] != DYNAMIC:
            continue
        if sum(res_shape[r] == DYNAMIC for r in group) > 1:
            for r in group:
                if res_shape[r] == DYNAMIC:
                    sizes[r] = _shape_operand(reshape, r)
            continue
        statics = math.prod(res_shape[r] for r in group if res_shape[r] != DYNAMIC)
        value = dim(source, d)
        if statics != 1:
            value = arith.DivUIOp(value, index(statics)).result
        for r in group:
            if res_shape[r] == DYNAMIC:
                sizes[r] = value
    return sizes


def _shape_operand(reshape, r: int) -> ir.Value:
    element = tensor.ExtractOp(reshape.operands[1], [index(r)]).result
    if element.type == ir.IndexType.get():
        return element
    return arith.IndexCastOp(ir.IndexType.get(), element).result


def reshapes_as_views(module_op) -> None:
    """Every tensor.reshape of the module that the dims prove an expand or collapse becomes one."""
    for op in [op for op in walk(module_op) if op.operation.name == "tensor.reshape"]:
        _rewrite(op.operation)
