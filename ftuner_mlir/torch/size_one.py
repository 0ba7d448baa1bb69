"""Dynamo's graphs specialized at size 1, served by the graph compiled before.

TorchDynamo traces a dim of size 0 or 1 as a constant even under `dynamic=True` (its 0/1
specialization), so the first call with a batch or a length of 1 brings a new graph, which would cost a
whole compilation. When that graph is an earlier one's with some dims set to 1 (the same ops in the same
order on the same inputs, every tensor's dtype and sizes and every argument equal once the earlier
graph's size symbols take the new graph's values), the code compiled for the earlier graph computes it:
that code serves any size. A graph that differs anywhere (the model branched on the size: a causal mask
made only for length > 1) is compiled as before.

A graph is compared through its `Outline`: taken before the backend rewrites the graph (it folds
scalars, traces attention as math), kept as plain records of each tensor node, with sizes as sympy
expressions over the graph's own symbols.
"""
from __future__ import annotations

import dataclasses

import sympy
import torch
from torch.fx.immutable_collections import immutable_dict, immutable_list


@dataclasses.dataclass(frozen=True)
class Outline:
    """A Dynamo graph as records: its user inputs' shapes (by source name) and, per tensor node in
    order, (op, target, args, kwargs, value), arguments and values made of plain data and sympy."""
    inputs: dict[str, tuple]                   # source name -> shape (ints and sympy expressions)
    nodes: list[tuple]


def outline(graph_module, names: dict, user: set) -> Outline | None:
    """The graph's Outline; `names` maps each placeholder to its source's name, `user` holds the
    placeholders of the caller's tensors. None: a node this module cannot describe (a constant the
    graph holds, a number made from a tensor's data): then no graph is matched to this one."""
    kept, nodes = {}, []
    try:
        for node in graph_module.graph.nodes:
            if _is_scalar(node):
                continue
            if node.op == "get_attr":
                raise _Undescribed(node.target)
            kept[node] = len(kept)
            target = names[node] if node.op == "placeholder" else node.target
            nodes.append((node.op, target, _arg(node.args, kept), _arg(node.kwargs, kept),
                          _value(node.meta.get("example_value"))))
    except _Undescribed:
        return None
    inputs = {names[n]: _value(n.meta["example_value"])[2] for n in user if not _is_scalar(n)}
    return Outline(inputs, nodes)


def ones_of(general: Outline, special: Outline) -> list[tuple[str, int]] | None:
    """The (input source, dim) pairs that `special` fixes to 1 where `general` has a size symbol, when
    `special` is `general` at those sizes (every other size symbol renamed one to one); else None."""
    if general.inputs.keys() != special.inputs.keys() or len(general.nodes) != len(special.nodes):
        return None
    values, ones = {}, []
    for name, shape in general.inputs.items():
        other = special.inputs[name]
        if len(shape) != len(other):
            return None
        for d, (size, size_there) in enumerate(zip(shape, other)):
            if isinstance(size, sympy.Symbol):
                if values.setdefault(size, size_there) != size_there:
                    return None
                if size_there == 1:
                    ones.append((name, d))
    renamed = [v for v in values.values() if v != 1]
    if not ones or not all(isinstance(v, sympy.Symbol) for v in renamed) or len(set(renamed)) != len(renamed):
        return None
    same = all(_same(a, b, values) for a, b in zip(general.nodes, special.nodes))
    return ones if same else None


class _Undescribed(Exception):
    pass


def _is_scalar(node) -> bool:
    """A node computing a number (a size, `x.size(0) * 12`, a folded attribute), not a tensor."""
    value = node.meta.get("example_value")
    if node.op == "output" or value is None:
        return False
    return not any(isinstance(leaf, torch.Tensor) for leaf in torch.utils._pytree.tree_leaves(value))


def _arg(arg, kept: dict):
    """An argument as plain data: ("node", k) for the k-th tensor node, a number node by its value."""
    if isinstance(arg, torch.fx.Node):
        if arg in kept:
            return ("node", kept[arg])
        value = arg.meta.get("example_value")
        try:                            # a size, or sizes (torch.Size) as a literal tuple would be
            return _arg(value, kept) if isinstance(value, (tuple, list)) else ("number", _number(value))
        except _Undescribed:            # a number read from a tensor (`.item()`): by how it is computed
            if arg.op == "placeholder":
                raise
            return ("computed", arg.op, arg.target, _arg(arg.args, kept), _arg(arg.kwargs, kept))
    if isinstance(arg, (tuple, list, immutable_list)):
        return ("seq", tuple(_arg(a, kept) for a in arg))
    if isinstance(arg, (dict, immutable_dict)):
        return ("map", tuple((k, _arg(v, kept)) for k, v in sorted(arg.items())))
    if isinstance(arg, slice):
        return ("slice", _arg(arg.start, kept), _arg(arg.stop, kept), _arg(arg.step, kept))
    if isinstance(arg, (torch.SymInt, torch.SymFloat, torch.SymBool, bool, int, float)):
        return ("number", _number(arg))
    if arg is None or arg is Ellipsis or isinstance(arg, (str, torch.dtype, torch.device, torch.layout,
                                                          torch.memory_format)):
        return ("literal", type(arg).__name__, arg)
    raise _Undescribed(type(arg).__name__)


def _number(value):
    """A number as a sympy expression (a size symbol's, or a constant); one Dynamo made up for a tensor's
    data (`.item()`: an unbacked symbol) cannot be matched across graphs."""
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        expr = value.node.expr
        if any(not str(s).startswith("s") for s in expr.free_symbols):     # unbacked: u0, zuf0...
            raise _Undescribed(str(expr))
        return expr
    if isinstance(value, (bool, int, float)):
        return sympy.sympify(value)
    raise _Undescribed(type(value).__name__)


def _value(value):
    """A node's example value: a tensor by dtype and shape, a tuple of them, or nothing."""
    if isinstance(value, torch.Tensor):
        return ("tensor", value.dtype, tuple(_number(size) for size in value.shape))
    if isinstance(value, (tuple, list)):
        return ("seq", tuple(_value(v) for v in value))
    if value is None:
        return None
    return ("number", _number(value))


def _same(a, b, values: dict) -> bool:
    """Whether two records are equal once `values` (the general graph's symbols -> the special's sizes)
    is put into the first."""
    if isinstance(a, sympy.Basic) and isinstance(b, sympy.Basic):
        a = a.xreplace(values)
        if isinstance(a, sympy.logic.boolalg.Boolean) or isinstance(b, sympy.logic.boolalg.Boolean):
            return a == b
        return sympy.expand(a - b) == 0
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y, values) for x, y in zip(a, b))
    return type(a) is type(b) and a == b
