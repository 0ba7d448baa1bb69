"""`torch.compile(model, backend="ftuner", dynamic=True)`: TorchDynamo hands over a graph whose
placeholders are the user's tensors, the symbolic sizes and strides of their dims, and the module's
parameters, buffers and scalar attributes (lifted as inputs). The backend freezes the module state into
constants, derives sizes and strides from the tensors (views are handed over as contiguous copies, so
their strides are a contiguous tensor's), and compiles the graph once through
ftuner_mlir.torch.compile with every symbolic dim left dynamic. A graph Dynamo makes for a size of 1
(which it traces as a constant) is run by an earlier graph's code when it is that graph at size 1
(size_one.py), else compiled like any other.

    torch.compile(model, backend="ftuner", dynamic=True, options={"num_threads": 1})

`options` are ftuner_mlir.compile's plus `on_weight_change` (weights.py: the lifted parameters are
checked at every call); `mode` "default" or "reduce-overhead" (a call is one native call already);
the max-autotune modes are refused (ftuner tunes uKernels once per machine: `ftuner tune`). The
backend compiles for inference: a graph with dropout or batch norm in training mode is refused.
"""
from __future__ import annotations

import weakref

import torch
from torch._dynamo import register_backend
from torch._dynamo.source import LocalSource, TensorPropertySource
from torch._subclasses.fake_tensor import unset_fake_temporarily

from .. import compiler
from ..errors import CompileError, InvalidOptions
from . import size_one
from .exporting import NarrowTrace, PinnedDims, attention_math
from .weights import WeightWatch, check_policy


class _FrozenGraph(torch.nn.Module):
    """The Dynamo graph as a module of the user's tensors alone."""

    def __init__(self, graph_module, plan: list[tuple], constants: list[torch.Tensor]):
        super().__init__()
        self.graph_module = graph_module
        self.plan = plan                        # per placeholder: ("input", i) | ("constant", k) | ("size", i, d)
        for k, value in enumerate(constants):
            self.register_buffer(f"constant_{k}", value.detach().clone())

    def forward(self, *inputs):
        args = []
        for step in self.plan:
            kind = step[0]
            if kind == "input":
                args.append(inputs[step[1]])
            elif kind == "constant":
                args.append(getattr(self, f"constant_{step[1]}"))
            elif kind == "value":
                args.append(step[1])
            elif kind == "size":
                args.append(inputs[step[1]].shape[step[2]])
            elif kind == "stride":
                args.append(inputs[step[1]].stride(step[2]))
            else:                                   # "storage_offset": of the contiguous copy
                args.append(0)
        return self.graph_module(*args)


def _placeholders(graph_module) -> list:
    return [n for n in graph_module.graph.nodes if n.op == "placeholder"]


def _source(node):
    """Where Dynamo took a placeholder's value from (L['ids'], L['self']...weight, a size), or None."""
    return node.meta["grapharg"].source if "grapharg" in node.meta else None


def _from_caller(source) -> bool:
    """Whether a placeholder's value comes from the call's arguments (`L['ids']`, `L['args'][0]`,
    `L['kwargs']['input_ids']`), not from the module (`L['self']...`) or a global."""
    while source is not None and not isinstance(source, LocalSource):
        source = getattr(source, "base", None)
    return source is not None and source.local_name != "self"


def _replace_uses(node, value) -> None:
    for user in list(node.users):
        user.args = torch.fx.node.map_arg(user.args, lambda a: value if a is node else a)
        user.kwargs = torch.fx.node.map_arg(user.kwargs, lambda a: value if a is node else a)


def _fold_scalars(graph_module, example_inputs) -> None:
    """Dynamo lifts a module's float attributes (LayerNorm eps, dropout p) as 0-d tensors read with
    `.item()`; torch.export would see a data-dependent scalar. Their values are constants: fold them."""
    for node, example in zip(_placeholders(graph_module), example_inputs):
        if _from_caller(_source(node)) or not isinstance(example, torch.Tensor) or example.dim() != 0:
            continue
        for user in list(node.users):
            if (user.op, user.target) == ("call_method", "item"):
                _replace_uses(user, example.item())
                graph_module.graph.erase_node(user)
    graph_module.recompile()


_FUSED_ATTENTION = (torch.nn.functional.scaled_dot_product_attention, torch._C._nn.scaled_dot_product_attention)


def _attention_as_math(graph_module) -> None:
    """Dynamo recorded the fused attention op itself: trace its math instead (exporting.py says why)."""
    for node in graph_module.graph.nodes:
        if node.op == "call_function" and node.target in _FUSED_ATTENTION:
            node.target = attention_math
    graph_module.recompile()


def _plan(graph_module, example_inputs):
    """How each placeholder is fed: from which user input, constant, input property or number."""
    plan, user_names, constants = [], [], 0
    for node, example in zip(_placeholders(graph_module), example_inputs):
        source = _source(node)
        if _from_caller(source) and isinstance(example, torch.Tensor):
            plan.append(("input", len(user_names)))
            user_names.append(source.name)
        elif isinstance(example, torch.Tensor):
            plan.append(("constant", constants))
            constants += 1
        else:
            plan.append(("property", node, example))     # resolved below, once every input is known
    for k, step in enumerate(plan):
        if step[0] == "property":
            plan[k] = _property_step(step[1], step[2], user_names)
    return plan


def _property_step(node, example, user_names) -> tuple:
    """A size, stride or storage offset of a user input; or a plain number (a global like math.pi)."""
    source = _source(node)
    if isinstance(source, TensorPropertySource) and source.base.name in user_names:
        return (source.prop.name.lower(), user_names.index(source.base.name), source.idx)
    if isinstance(example, (bool, int, float)) and not isinstance(example, torch.SymInt):
        return ("value", example)
    raise CompileError(f"backend 'ftuner': graph input {node.name} ({source.name if source else 'unknown'}) "
                       f"is neither a tensor, a number, nor a size or stride of an input tensor")


def _symbolic_dims(graph_module, plan) -> list[tuple[int, int]]:
    """(input, dim) of every dim Dynamo made symbolic."""
    out = []
    for node, step in zip(_placeholders(graph_module), plan):
        if step[0] == "input":
            shape = getattr(node.meta.get("example_value"), "shape", ())
            out += [(step[1], d) for d, size in enumerate(shape) if isinstance(size, torch.SymInt)]
    return out


class _Specializations:
    """The graph compiled with every symbolic dim dynamic; when the lowering pins some of them
    (PinnedDims), with those kept dynamic and the others compiled at each call's sizes, one module per
    combination; when the code serves some dims only at the example's sizes (NarrowTrace: Whisper's
    frame count), with those compiled at each call's sizes."""

    def __init__(self, frozen: _FrozenGraph, symbolic: list[tuple[int, int]], options: dict):
        self.frozen, self.symbolic, self.options = frozen, symbolic, options
        self.static: list[tuple[int, int]] = []
        self.modules: dict[tuple, object] = {}

    def __call__(self, inputs, ones: tuple = ()):
        """`inputs` run by the module for their sizes; `ones`: (input, dim) pairs at size 1 that the
        module's ranges start at 2 (torch.export's own 0/1 specialization), for a graph proved to be
        this one at those sizes (size_one.py)."""
        module = self.module_for(inputs)
        return (module.taking_one(ones) if ones else module)(*inputs)

    def module_for(self, inputs):
        key = tuple(inputs[i].shape[d] for i, d in self.static)
        if key not in self.modules:
            self.modules[key] = self._compile(inputs)
        return self.modules[key]

    def _compile(self, inputs):
        try:
            return self._export(inputs)
        except (PinnedDims, NarrowTrace) as err:
            static = self._static_after(err)
            if self.static or not static:
                raise
        self.static = static
        return self._export(inputs)

    def _static_after(self, err) -> list[tuple[int, int]]:
        if isinstance(err, NarrowTrace):        # served at the example's sizes only: those dims static
            return [x for x in self.symbolic if x in set(err.dims)]
        pinned = {(r.input, r.dim) for r in err.dims}      # pinned dims stay dynamic, the others static
        return [x for x in self.symbolic if x not in pinned]

    @torch._dynamo.disable
    def _export(self, inputs):
        from . import compile as compile_module

        dynamic = [{} for _ in inputs]
        for i, d in self.symbolic:
            if (i, d) not in self.static:
                dynamic[i][d] = torch.export.Dim.AUTO
        # torch.export traces in its own context: inside Dynamo's, its shape guards (on `L['inputs']`)
        # would land in the frame being compiled, which then fails its own guards; and on copies: it
        # marks its examples' dynamic dims, which Dynamo guards on
        examples = tuple(t.detach().clone(memory_format=torch.contiguous_format) for t in inputs)
        with torch._guards.tracing(None), unset_fake_temporarily():
            return compile_module(self.frozen, examples, (tuple(d or None for d in dynamic),), **self.options)


MODES = ("default", "reduce-overhead")


def backend_options(mode, options) -> dict:
    """ftuner_mlir.torch.compile's options from torch.compile's `mode` and `options`, checked."""
    if mode not in (None, *MODES):
        raise InvalidOptions(f"backend 'ftuner' takes mode {' or '.join(map(repr, MODES))}, not {mode!r}: it tunes "
                             f"no shape at compile time (`ftuner tune` measures the uKernels once per machine)")
    options = dict(options or {})
    check_policy(options.get("on_weight_change", "raise"))
    compiler.check_options(**{k: v for k, v in options.items() if k != "on_weight_change"})
    return options


def _training_ops(graph_module) -> list[str]:
    """Dropout and batch norm calls of the graph in training mode, each with its line in the model."""
    found = []
    for node in graph_module.graph.nodes:
        if node.op != "call_function":
            continue
        name = getattr(node.target, "__name__", "")
        position = {"dropout": 2, "dropout1d": 2, "dropout2d": 2, "dropout3d": 2, "alpha_dropout": 2,
                    "feature_alpha_dropout": 2, "batch_norm": 5}.get(name)
        if position is None:
            continue
        training = node.kwargs.get("training", node.args[position] if len(node.args) > position else False)
        if training is True:
            found.append(f"{name} at {_model_line(node)}")
    return found


def _model_line(node) -> str:
    """The model's source line that made `node` (Dynamo keeps a stack trace), or its name."""
    frames = [ln.strip() for ln in node.meta.get("stack_trace", "").splitlines() if ln.strip().startswith("File ")]
    return frames[-1] if frames else node.name


def _refuse_training(graph_module) -> None:
    ops = _training_ops(graph_module)
    if ops:
        raise CompileError(f"backend 'ftuner' compiles for inference, and the model runs in training mode: "
                           f"{'; '.join(ops[:3])}{' ...' if len(ops) > 3 else ''}. Call model.eval() before "
                           f"calling the compiled model")


class _Compiled:
    """What the backend hands Dynamo for a graph: the graph's specializations, compiled from the module
    state in the graph's inputs, its lifted parameters and buffers watched (weights.py) unless the
    policy ignores changes, and compiled again on a change under policy "recompile"."""

    def __init__(self, graph_module, example_inputs, options: dict, on_weight_change: str, outline):
        self.options, self.on_weight_change, self.outline = options, on_weight_change, outline
        self.graph_module = graph_module
        self.plan = _plan(graph_module, example_inputs)
        self.names = _names(graph_module)          # before export
        self.positions = [k for k, step in enumerate(self.plan) if step[0] == "input"]
        self.constant_positions = [k for k, step in enumerate(self.plan) if step[0] == "constant"]
        self.user_names = [self.names[k] for k in self.positions]
        self._specialize(example_inputs)

    def _specialize(self, current_inputs) -> None:
        constants = [current_inputs[k] for k in self.constant_positions]
        self.specializations = _Specializations(_FrozenGraph(self.graph_module, self.plan, constants),
                                                _symbolic_dims(self.graph_module, self.plan), self.options)
        self.specializations.module_for([current_inputs[k] for k in self.positions])   # compile now, not at a call
        self.watch = None if self.on_weight_change == "ignore" else \
            WeightWatch([(self.names[k], current_inputs[k]) for k in self.constant_positions])

    def __call__(self, *args):
        return self.call(args)

    def call(self, args, ones: tuple = ()):
        """The graph on its placeholders' values `args` (only its tensors are read)."""
        if self.watch is not None and self.watch.stale(self.on_weight_change, "the graph"):   # policy "recompile"
            self._specialize(args)
        return self.specializations([args[k] for k in self.positions], ones)


class _AtSizeOne:
    """A graph Dynamo specialized at size 1 that is `general`'s graph at those sizes (size_one.py): run
    by `general`'s code, its placeholders fed from this graph's by source name."""

    def __init__(self, general: _Compiled, names: list[str], ones: list[tuple[str, int]]):
        self.general = general
        where = {name: k for k, name in enumerate(names)}
        self.index = [where.get(name) for name in general.names]     # None: a size this graph has as a constant
        self.ones = tuple((general.user_names.index(name), d) for name, d in ones)

    def __call__(self, *args):
        return self.general.call([None if k is None else args[k] for k in self.index], self.ones)


_COMPILED: "weakref.WeakSet[_Compiled]" = weakref.WeakSet()      # this process's graphs, while Dynamo keeps them


def _names(graph_module) -> list[str]:
    """Each placeholder's source name (`L['ids']`, `L['self']...weight`), or its node name."""
    return [_source(n).name if _source(n) else n.name for n in _placeholders(graph_module)]


def _outline(graph_module):
    placeholders = _placeholders(graph_module)
    return size_one.outline(graph_module, dict(zip(placeholders, _names(graph_module))),
                            {n for n in placeholders if _from_caller(_source(n))})


def _served_by_earlier(graph_module, outline, options: dict, on_weight_change: str):
    """An _AtSizeOne when an earlier graph with the same options is this one at larger sizes, else None."""
    if outline is None:
        return None
    for earlier in list(_COMPILED):
        if earlier.outline is None or (earlier.options, earlier.on_weight_change) != (options, on_weight_change):
            continue
        ones = size_one.ones_of(earlier.outline, outline)
        if ones is not None:
            return _AtSizeOne(earlier, _names(graph_module), ones)
    return None


@register_backend(name="ftuner")
def ftuner_backend(graph_module, example_inputs, mode=None, options=None):
    options = backend_options(mode, options)
    on_weight_change = options.pop("on_weight_change", "raise")
    outline = _outline(graph_module)                 # before the rewrites below
    earlier = _served_by_earlier(graph_module, outline, options, on_weight_change)
    if earlier is not None:
        return earlier
    _refuse_training(graph_module)
    _fold_scalars(graph_module, example_inputs)
    _attention_as_math(graph_module)
    compiled = _Compiled(graph_module, example_inputs, options, on_weight_change, outline)
    _COMPILED.add(compiled)
    return compiled
