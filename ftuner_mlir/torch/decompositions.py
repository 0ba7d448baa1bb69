"""ATen ops rewritten in the import child before torch-mlir sees them, where its lowering leaves an op
upstream MLIR cannot compile or types a dynamic dim static.

`torch.cumsum` becomes `tm_tensor.scan` in torch-mlir's output, which no upstream pass lowers. Models
compute position ids (RoBERTa-family) and masks (decoders called without an attention mask) with it. It
is rewritten as a prefix sum by doubling (Hillis-Steele): ceil(log2(n)) steps of `x += x shifted by k`,
k = 1, 2, 4, ..., each step a pad, a slice and an add that the pipeline fuses and vectorizes across the
other dims. n is the dim's declared upper bound (2^31 when it has none: a step past n adds zeros; such
steps shift by a clamped gather, not a pad of up to 2^30 elements).
Integer sums are exact; float sums are added in a tree order (error ~log2(n) ulps, not n).

A view that merges two or more dynamic dims (`[B, T, C] -> [B*T, C]`: torch-mlir's own decomposition of
a 3-D `linear`, GPT-2's `x.view(-1, C)`) is lowered by torch-mlir as a cast of all but one of them to
1 (`tensor<?x1xC>`): the compiled code then serves only that size (PinnedDims). Such a linear is written
as view + mm + view, and every such view becomes `aten.flatten.using_ints`, which torch-mlir lowers to
one `tensor.collapse_shape` of the dynamic dims (kept whole by naming it a backend-legal op).

These and torch-mlir's table are applied node by node in place (graph_rewrites.py), not by torch's
retrace of the whole program, which is kept for the programs the in-place rewrite cannot take.
"""
from __future__ import annotations

import sympy
import torch
import torch.nn.functional as F
from torch.utils._sympy.numbers import int_oo

from . import graph_rewrites

UNBOUNDED_STEPS = 31
PAD_LIMIT = 1 << 12      # a dim bounded this far is shifted by padding (the pad holds up to twice it)


def cumsum_by_doubling(x: torch.Tensor, dim: int, dtype=None) -> torch.Tensor:
    if dtype is not None:
        x = x.to(dtype)
    elif not x.dtype.is_floating_point:
        x = x.to(torch.int64)                   # torch.cumsum's own promotion of integers and bools
    dim = dim % max(x.dim(), 1)
    moved = x.movedim(dim, -1)
    n = moved.shape[-1]
    upper, shift = _upper_bound(n), 1
    while shift < upper:
        moved = moved + _shifted(moved, n, shift, upper)
        shift *= 2
    return moved.movedim(-1, dim)


def _shifted(x: torch.Tensor, n, shift: int, upper: int) -> torch.Tensor:
    """x moved `shift` places along its last dim, zeros coming in. A pad then a slice while the pad stays
    small; past PAD_LIMIT (a dim without an upper bound takes 31 steps, up to 2^30 places), a gather of
    x[i - shift] (clamped) where i >= shift, so every step holds n elements."""
    if upper <= PAD_LIMIT:
        return F.pad(x, (shift, 0))[..., :n]
    places = torch.arange(n, device=x.device)
    source = (places - shift).clamp(min=0)
    return torch.where(places >= shift, x.index_select(-1, source), torch.zeros((), dtype=x.dtype))


def _upper_bound(size) -> int:
    if isinstance(size, int):
        return size
    bound = size.node.shape_env.bound_sympy(size.node.expr).upper
    unbounded = bound in (sympy.oo, int_oo)          # torch's int_oo calls itself finite
    return 1 << UNBOUNDED_STEPS if unbounded else int(bound)


aten = torch.ops.aten


def linear_over_rows(x: torch.Tensor, weight: torch.Tensor, bias=None) -> torch.Tensor:
    """`linear` as a 2-D matmul over the input's rows, collapsed by a view with -1 (made a flatten)."""
    rows = aten.view.default(x.contiguous(), [-1, x.shape[-1]])
    out = aten.mm.default(rows, aten.permute.default(weight, [1, 0]))
    if bias is not None:
        out = aten.add.Tensor(out, bias)
    return aten.view.default(out, [*x.shape[:-1], weight.shape[0]])


def _dynamic_dims(shape) -> int:
    return sum(isinstance(size, torch.SymInt) and not size.node.expr.is_number for size in shape)


def _linear(otherwise):
    """linear_over_rows where the leading dims hold two or more dynamic ones; elsewhere `otherwise`
    (torch-mlir's own decomposition: the code the pipeline is tuned for)."""
    def linear(x, weight, bias=None):
        if _dynamic_dims(x.shape[:-1]) >= 2:
            return linear_over_rows(x, weight, bias)
        return otherwise(x, weight, bias) if otherwise else NotImplemented
    return linear


def import_table(torch_mlir_table: dict) -> dict:
    """torch-mlir's decomposition table with these rewrites (cumsum by doubling, linear over rows)."""
    return {**torch_mlir_table, aten.cumsum.default: cumsum_by_doubling,
            aten.linear.default: _linear(torch_mlir_table.get(aten.linear.default))}


def for_import(load, torch_mlir_table: dict):
    """In the import child: the program `load()` returns, decomposed by torch-mlir's table and these
    rewrites (in place, node by node: graph_rewrites.py; where that cannot be done, a fresh copy in one
    retrace), its views of merged dynamic dims made flattens (the parent keys the cache by the program
    as exported)."""
    table = import_table(torch_mlir_table)
    program = load()
    try:
        graph_rewrites.rewrite(program, table)
    except graph_rewrites.CannotRewrite:
        program = load().run_decompositions(table)
    strided_as_views(program)
    views_as_flatten(program)
    return program


# what the import child names backend-legal: torch-mlir lowers it itself instead of decomposing it
LEGAL_OPS = ["aten.flatten.using_ints"]


def collapsed_range(source, result) -> tuple[int, int] | None:
    """(first, last) when `result` is `source` with dims first..last merged into one, else None."""
    source, result = list(source), list(result)
    merged = len(source) - len(result) + 1
    if merged < 2:
        return None
    for first in range(len(result)):
        if source[:first] == result[:first] and source[first + merged:] == result[first + 1:]:
            return first, first + merged - 1
    return None


def _contiguous_strides(shape) -> list:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step = step * size
    return strides[::-1]


def _same(a, b) -> bool:
    expr = lambda v: v.node.expr if isinstance(v, torch.SymInt) else sympy.Integer(v)     # noqa: E731
    return sympy.expand(expr(a) - expr(b)) == 0


def _numel(shape):
    out = 1
    for size in shape:
        out = out * size
    return out


def strided_as_views(program) -> None:
    """`as_strided` of a contiguous tensor into the contiguous layout of its own element count is a view:
    torch's group_norm decomposition makes one (`[B, groups]`), which torch-mlir refuses when a size is
    dynamic ("`size` must be a static int list"). Rewritten in place."""
    graph = program.graph
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target != aten.as_strided.default or len(node.args) > 3 \
                or node.kwargs.get("storage_offset"):
            continue
        source, result = node.args[0].meta["val"], node.meta["val"]
        if not (all(map(_same, source.stride(), _contiguous_strides(source.shape)))
                and all(map(_same, result.stride(), _contiguous_strides(result.shape)))
                and _same(_numel(source.shape), _numel(result.shape))):
            continue
        node.target, node.args = aten.view.default, node.args[:2]
    graph.lint()


def views_as_flatten(program) -> None:
    """Every view that merges two or more dynamic dims becomes `aten.flatten.using_ints` (in place)."""
    graph = program.graph
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in (aten.view.default, aten._unsafe_view.default):
            continue
        source = node.args[0].meta["val"].shape
        merged = collapsed_range(source, node.meta["val"].shape)
        if merged is None or _dynamic_dims(source[merged[0]:merged[1] + 1]) < 2:
            continue
        with graph.inserting_before(node):
            flat = graph.call_function(aten.flatten.using_ints, (node.args[0], *merged))
        flat.meta = dict(node.meta)
        node.replace_all_uses_with(flat)
        graph.erase_node(node)
    graph.lint()
