"""The import's decompositions applied node by node on the exported graph, without torch's retrace.

`ExportedProgram.run_decompositions` traces the whole program again through functionalization and proxy
tensors, twice (metadata, then the graph), tracing every size computation as a node: for BERT-base
5.5 s with an empty table and 14.5 s with torch-mlir's, ~15 s of a 37-60 s cold start. The exported
graph is already functional, and most of its nodes are ops the table leaves alone. Here only the nodes
that decompose (ops of the table, and composite ops, which the dispatcher decomposes) are run again: the
decomposition runs on the node's fake values under the program's own fake mode, a dispatch mode records
each op it reaches as a node before the old one (ops of the table decompose again, as in make_fx), and
the sizes it passes reuse the nodes that already produce them: 2 s for BERT-base. The graph that comes
out holds the retrace's ops (not the copies functionalization adds where a dropout returns its input,
which torch-mlir folds away anyway); a program this cannot rewrite (a mutation other nodes see, a size
that is not a sum, product or floor division of input sizes, a constant made inside a decomposition, a
decomposition that fixes a dynamic size) is left to the retrace (decompositions.for_import).
"""
from __future__ import annotations

import operator

import sympy
import torch
from torch._dispatch.python import enable_python_dispatcher
from torch.fx.experimental.proxy_tensor import autograd_would_have_decomposed
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves, tree_map
from torch.utils._sympy.functions import FloorDiv

aten = torch.ops.aten
KEPT_META = ("stack_trace", "nn_module_stack", "source_fn_stack")   # what the new nodes take from the old


class CannotRewrite(Exception):
    """A node this module cannot decompose in place: the program goes through the retrace."""


class Sizes:
    """The node producing each dynamic size, created where missing: sym_size of a graph input for a
    symbol, operator nodes for sums, products and floor divisions of them (torch.export's `2*s - 1`,
    `s // 16`)."""

    def __init__(self, graph: torch.fx.Graph):
        self.graph = graph
        self.inputs = [node for node in graph.nodes if node.op == "placeholder"]
        self.nodes: dict[sympy.Expr, torch.fx.Node] = {}         # the ones placed before every use
        self._own: dict[sympy.Expr, torch.fx.Node] = {}          # the graph's own, usable once they precede
        self._position = {node: i for i, node in enumerate(graph.nodes)}
        self._before = 0                                         # where the nodes asked for will be read
        for node in graph.nodes:
            value = node.meta.get("val")
            if isinstance(value, torch.SymInt) and isinstance(value.node.expr, sympy.Symbol):
                self._own.setdefault(value.node.expr, node)

    def before(self, node: torch.fx.Node) -> None:
        """The sizes asked for next are read just before `node` (a node of the original graph)."""
        self._before = self._position[node]

    def arg(self, value):
        """An int, or the node computing the SymInt `value`."""
        if not isinstance(value, torch.SymInt):
            return value
        return self._expr(value.node.expr)

    def _expr(self, expr):
        if expr.is_number:
            if not expr.is_integer:
                raise CannotRewrite(f"a size {expr}")
            return int(expr)
        if isinstance(expr, sympy.Symbol):
            return self._symbol(expr)
        if expr not in self.nodes:
            if isinstance(expr, (sympy.Mul, sympy.Add)):
                op = operator.mul if isinstance(expr, sympy.Mul) else operator.add
                terms = sorted(expr.args, key=lambda term: term.is_number)          # a size node first
            elif isinstance(expr, FloorDiv):
                op, terms = operator.floordiv, expr.args
            else:
                raise CannotRewrite(f"a size {expr}")
            out = self._expr(terms[0])
            for term in terms[1:]:
                out = self._binary(op, out, self._expr(term))
            self.nodes[expr] = out
        return self.nodes[expr]

    def _symbol(self, symbol) -> torch.fx.Node:
        if symbol in self.nodes:
            return self.nodes[symbol]
        node = self._own.get(symbol)
        if node is not None and self._position[node] < self._before:
            return node
        self.nodes[symbol] = self._input_size(symbol)
        return self.nodes[symbol]

    def _input_size(self, symbol) -> torch.fx.Node:
        """sym_size of an input dim that is `symbol`, or `a*symbol + b` (a dim declared as a multiple,
        `16*Dim("H")`): then (size - b) // a."""
        for placeholder in self.inputs:
            for dim, size in enumerate(getattr(placeholder.meta.get("val"), "shape", ())):
                if not isinstance(size, torch.SymInt) or symbol not in size.node.expr.free_symbols:
                    continue
                a, b = _linear_in(size.node.expr, symbol)
                if a is None:
                    continue
                with self.graph.inserting_after(self.inputs[-1]):
                    node = self.graph.call_function(aten.sym_size.int, (placeholder, dim))
                node.meta["val"] = size
                for op, operand in [(operator.sub, b)] * (b != 0) + [(operator.floordiv, a)] * (a != 1):
                    with self.graph.inserting_after(node):
                        node = self._binary(op, node, operand)
                return node
        raise CannotRewrite(f"no input has the size {symbol}")

    def _binary(self, op, a, b):
        node = self.graph.call_function(op, (a, b))
        node.meta["val"] = op(a if isinstance(a, int) else a.meta["val"], b if isinstance(b, int) else b.meta["val"])
        return node


def _linear_in(expr, symbol) -> tuple[int | None, int]:
    """(a, b) with expr == a*symbol + b for integers a != 0 and b, else (None, 0)."""
    a = expr.coeff(symbol)
    b = sympy.expand(expr - a * symbol)
    if not (a.is_Integer and a != 0 and b.is_Integer):
        return None, 0
    return int(a), int(b)


class Recorder(TorchDispatchMode):
    """Each op reaching it (on fake tensors) computed and recorded as a node at the graph's insertion
    point; an op of `table` decomposed again instead."""

    def __init__(self, graph: torch.fx.Graph, table: dict, sizes: Sizes, meta: dict):
        super().__init__()
        self.graph, self.table, self.sizes, self.meta = graph, table, sizes, meta
        self.made: dict[int, torch.fx.Node] = {}            # id(fake tensor) -> the node producing it
        self._alive: list = []                               # the fake tensors `made` names, kept alive

    def bind(self, value, node: torch.fx.Node) -> None:
        self.made[id(value)] = node
        self._alive.append(value)

    def node_of(self, value):
        if isinstance(value, torch.Tensor):
            if id(value) not in self.made:
                raise CannotRewrite("a tensor made inside a decomposition (a constant)")
            return self.made[id(value)]
        if isinstance(value, torch.SymInt):
            return self.sizes.arg(value)
        if isinstance(value, (torch.SymFloat, torch.SymBool)):
            raise CannotRewrite(f"a symbolic {type(value).__name__}")
        return value

    def _node(self, target, args, kwargs, value) -> torch.fx.Node:
        node = self.graph.call_function(target, args, kwargs)
        node.meta.update(self.meta, val=value)
        return node

    @staticmethod
    def _composite(func, args, kwargs):
        """func.decompose where autograd would have decomposed func (a composite kernel)."""
        if func in (aten.size.default, aten.stride.default, aten.storage_offset.default):
            return None
        return func.decompose if autograd_would_have_decomposed(func, tree_leaves((args, kwargs))) else None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.ops.prim.device.default:
            return func(*args, **kwargs)
        if func is aten.alias.default:          # the retrace's functionalization drops aliases too
            out = func(*args, **kwargs)
            self.bind(out, self.node_of(args[0]))
            return out
        for decompose in (self.table.get(func), self._composite(func, args, kwargs)):    # as make_fx does
            if decompose is not None:
                with self:
                    out = decompose(*args, **kwargs)
                if out is not NotImplemented:
                    return out
        out = func(*args, **kwargs)
        if not any(isinstance(v, torch.Tensor) for v in tree_leaves(out)):
            return out                        # a size or a flag: its users name it through Sizes
        node = self._node(func, tree_map(self.node_of, args), tree_map(self.node_of, kwargs), out)
        if isinstance(out, (tuple, list)):
            for i, item in enumerate(out):
                if isinstance(item, torch.Tensor):
                    self.bind(item, self._node(operator.getitem, (node, i), {}, item))
        elif isinstance(out, torch.Tensor):
            self.bind(out, node)
        return out


def decomposes(node: torch.fx.Node, table: dict) -> bool:
    """Whether the retrace would replace `node`: an op of the table, or a composite op, computing
    tensors (not a size, nor an assertion)."""
    target, value = node.target, node.meta.get("val")
    if node.op != "call_function" or not isinstance(target, torch._ops.OpOverload):
        return False
    if not (isinstance(value, torch.Tensor) or isinstance(value, (tuple, list)) and value
            and all(isinstance(v, torch.Tensor) for v in value)):
        return False
    return target in table or torch._C._dispatch_has_kernel_for_dispatch_key(
        target.name(), torch._C.DispatchKey.CompositeImplicitAutograd)


def mutates(node: torch.fx.Node) -> bool:
    target = node.target
    return node.op == "call_function" and isinstance(target, torch._ops.OpOverload) and target._schema.is_mutable


def _functional(graph: torch.fx.Graph, node: torch.fx.Node) -> None:
    """An in-place op made its functional twin (`add_` -> `add`; `detach_` reads its input) where
    nothing else sees the mutation: it is the only reader of a tensor a non-view op made (torch's own
    residual `+=`, a constant's `detach_`). Any other is CannotRewrite (the retrace functionalizes it)."""
    target, mutated = node.target, node.args[0] if node.args else None
    made = isinstance(mutated, torch.fx.Node) and mutated.op == "call_function" \
        and isinstance(mutated.target, torch._ops.OpOverload) \
        and all(r.alias_info is None for r in mutated.target._schema.returns)
    twin = _functional_twin(target)
    if not (made and list(mutated.users) == [node] and twin is not None):
        raise CannotRewrite(f"an in-place {target} whose mutation others see (the retrace functionalizes it)")
    if twin is aten.detach.default:
        node.replace_all_uses_with(mutated)
        graph.erase_node(node)
    else:
        node.target = twin


def _functional_twin(target):
    packet = getattr(aten, target._schema.name.split("::")[-1].rstrip("_"), None)
    twin = getattr(packet, target._overloadname, None) if packet is not None else None
    return twin if twin is not None and not twin._schema.is_mutable else None


def rewrite(program, table: dict) -> int:
    """Every node of the program's graph that `table` (or a composite kernel) decomposes, replaced in
    place by its decomposition; the number replaced. CannotRewrite where the program needs the retrace:
    the program (graph and shape environment) is then spoiled, the retrace takes a fresh copy."""
    graph = program.graph
    for node in list(graph.nodes):
        if mutates(node):
            _functional(graph, node)
    fake_mode = next((v.fake_mode for v in (n.meta.get("val") for n in graph.nodes)
                      if isinstance(v, torch._subclasses.FakeTensor)), None)
    todo = [node for node in graph.nodes if decomposes(node, table)]
    if not todo:
        return 0
    if fake_mode is None:
        raise CannotRewrite("the graph carries no fake values")
    sizes, fixed = Sizes(graph), _fixed_sizes(fake_mode)
    try:
        for node in todo:
            _replace(graph, node, table, sizes, fake_mode)
            if _fixed_sizes(fake_mode) != fixed:
                raise CannotRewrite(f"decomposing {node.target} fixed a dynamic size")
    except CannotRewrite:
        raise
    except Exception as err:          # what the retrace may still do (it reports its own errors)
        raise CannotRewrite(f"{type(err).__name__}: {err}") from err
    graph.eliminate_dead_code()
    graph.lint()
    return len(todo)


def _fixed_sizes(fake_mode) -> set:
    """The symbols the shape environment has replaced by a number (a guard fixed them)."""
    env = fake_mode.shape_env
    return {symbol for symbol, value in env.replacements.items() if value.is_number} if env else set()


def _replace(graph, node, table, sizes, fake_mode) -> None:
    sizes.before(node)
    recorder = Recorder(graph, table, sizes, {k: node.meta[k] for k in KEPT_META if k in node.meta})
    for source in node.all_input_nodes:
        if isinstance(source.meta.get("val"), torch.Tensor):
            recorder.bind(source.meta["val"], source)
    args, kwargs = torch.fx.node.map_arg((node.args, node.kwargs), lambda n: n.meta["val"])
    decompose = table.get(node.target, node.target)
    with graph.inserting_before(node):
        # the Python dispatcher, as make_fx: composite ops take their Python (symbolic) decompositions,
        # not C++ kernels that read sizes as ints (and so fix a dynamic dim to its example's size)
        with enable_python_dispatcher(), fake_mode, recorder:
            out = decompose(*args, **kwargs)
            if out is NotImplemented:
                out = node.target(*args, **kwargs)
        _redirect(node, out, recorder)
    graph.erase_node(node)


def _redirect(node, out, recorder) -> None:
    """`node`'s readers read the decomposition's result instead."""
    if isinstance(out, torch.Tensor):
        node.replace_all_uses_with(recorder.node_of(out))
        return
    if not isinstance(out, (tuple, list)):
        raise CannotRewrite(f"{node.target} decomposes to {type(out).__name__}")
    for user in list(node.users):
        if user.target is not operator.getitem:
            raise CannotRewrite(f"a result of {node.target} read without getitem")
        user.replace_all_uses_with(recorder.node_of(out[user.args[1]]))
        user.graph.erase_node(user)
