"""`torch.compile(model, backend="ftuner", dynamic=True)`: TorchDynamo hands over a graph whose
placeholders are the user's tensors, the symbolic sizes of their dims, and the module's parameters,
buffers and scalar attributes (lifted as inputs). The backend freezes the module state into constants
(inference: later changes to the weights are not seen), derives the sizes from the tensors' shapes,
and compiles the graph once through ftuner_mlir.torch.compile with every symbolic dim left dynamic.
"""
from __future__ import annotations

import torch
from torch._dynamo import register_backend
from torch._dynamo.source import LocalSource, TensorPropertySource
from torch._subclasses.fake_tensor import unset_fake_temporarily

from ..errors import CompileError
from .exporting import PinnedDims, attention_math


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
            if step[0] == "input":
                args.append(inputs[step[1]])
            elif step[0] == "constant":
                args.append(getattr(self, f"constant_{step[1]}"))
            else:
                args.append(inputs[step[1]].shape[step[2]])
        return self.graph_module(*args)


def _placeholders(graph_module) -> list:
    return [n for n in graph_module.graph.nodes if n.op == "placeholder"]


def _source(node):
    """Where Dynamo took a placeholder's value from (L['ids'], L['self']...weight, a size), or None."""
    return node.meta["grapharg"].source if "grapharg" in node.meta else None


def _replace_uses(node, value) -> None:
    for user in list(node.users):
        user.args = torch.fx.node.map_arg(user.args, lambda a: value if a is node else a)
        user.kwargs = torch.fx.node.map_arg(user.kwargs, lambda a: value if a is node else a)


def _fold_scalars(graph_module, example_inputs) -> None:
    """Dynamo lifts a module's float attributes (LayerNorm eps, dropout p) as 0-d tensors read with
    `.item()`; torch.export would see a data-dependent scalar. Their values are constants: fold them."""
    for node, example in zip(_placeholders(graph_module), example_inputs):
        if isinstance(_source(node), LocalSource) or not isinstance(example, torch.Tensor) or example.dim() != 0:
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
    """How each placeholder is fed: from which user input, constant or input dim."""
    plan, constants, inputs, user_names = [], [], [], []
    for node, example in zip(_placeholders(graph_module), example_inputs):
        source = _source(node)
        if isinstance(source, LocalSource) and isinstance(example, torch.Tensor):
            plan.append(("input", len(inputs)))
            inputs.append(example)
            user_names.append(source.local_name)
        elif isinstance(example, torch.Tensor):
            plan.append(("constant", len(constants)))
            constants.append(example)
        else:
            plan.append(("size", node))        # resolved below, once every input is known
    for k, step in enumerate(plan):
        if step[0] == "size":
            plan[k] = _size_step(step[1], user_names)
    return plan, constants, inputs


def _size_step(node, user_names) -> tuple:
    source = _source(node)
    if isinstance(source, TensorPropertySource) and isinstance(source.base, LocalSource) \
            and source.base.local_name in user_names and source.prop.name == "SIZE":
        return ("size", user_names.index(source.base.local_name), source.idx)
    raise CompileError(f"backend 'ftuner': graph input {node.name} ({source.name if source else 'unknown'}) "
                       f"is neither a tensor nor the size of an input tensor's dim")


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
    combination (the paper's setting: batch fixed, sequence length dynamic)."""

    def __init__(self, frozen: _FrozenGraph, symbolic: list[tuple[int, int]], options: dict):
        self.frozen, self.symbolic, self.options = frozen, symbolic, options
        self.static: list[tuple[int, int]] = []
        self.modules: dict[tuple, object] = {}

    def __call__(self, inputs):
        return self.module_for(inputs)(*inputs)

    def module_for(self, inputs):
        key = tuple(inputs[i].shape[d] for i, d in self.static)
        if key not in self.modules:
            self.modules[key] = self._compile(inputs)
        return self.modules[key]

    def _compile(self, inputs):
        try:
            return self._export(inputs)
        except PinnedDims as err:
            pinned = {(r.input, r.dim) for r in err.dims}
            static = [x for x in self.symbolic if x not in pinned]
            if self.static or not static:
                raise
            self.static = static
            return self._export(inputs)

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
        examples = tuple(t.detach().clone() for t in inputs)
        with torch._guards.tracing(None), unset_fake_temporarily():
            return compile_module(self.frozen, examples, (tuple(d or None for d in dynamic),), **self.options)


@register_backend(name="ftuner")
def ftuner_backend(graph_module, example_inputs, **options):
    _fold_scalars(graph_module, example_inputs)
    _attention_as_math(graph_module)
    plan, constants, inputs = _plan(graph_module, example_inputs)
    specializations = _Specializations(_FrozenGraph(graph_module, plan, constants),
                                       _symbolic_dims(graph_module, plan), options)
    positions = [k for k, step in enumerate(plan) if step[0] == "input"]
    specializations.module_for([example_inputs[k] for k in positions])    # compile now, not at the first call

    def run(*args):
        return specializations([args[k] for k in positions])

    run.specializations = specializations
    return run
