"""Dynamo's graphs specialized at size 1 (size_one.py): matched to the general graph only when they are
that graph at size 1. Graphs captured with a recording backend (no compilation here; the model zoo runs
the matched graphs through the compiled code)."""
import ftuner_mlir.torch  # noqa: F401  first: torch then shares the compiled code's OpenMP runtime
import torch

from ftuner_mlir.torch import dynamo, size_one


def _outlines(model, *inputs):
    """The Outline of each graph Dynamo makes for `model` over the calls `inputs` (dynamic=True)."""
    outlines = []

    def record(graph_module, example_inputs):
        outlines.append(dynamo._outline(graph_module))
        return graph_module.forward

    torch._dynamo.reset()
    compiled = torch.compile(model, backend=record, dynamic=True)
    for args in inputs:
        compiled(*args)
    return outlines


class Mixer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)

    def forward(self, x):                       # x [B, T, 8]
        b, t, _ = x.shape
        scores = torch.softmax(x @ x.transpose(1, 2) / 8 ** 0.5, -1)
        return self.proj(scores @ x).reshape(b * t, 8).view(b, t, 8)


class BranchesAtOne(Mixer):
    def forward(self, x):
        if x.shape[1] > 1:                      # a model's branch on the size (a causal mask, a cache)
            return super().forward(x)
        return self.proj(x) * 2


def test_a_graph_at_size_one_is_matched_to_the_general_graph():
    general, batch_one, both_one = _outlines(Mixer().eval(), (torch.randn(3, 5, 8),), (torch.randn(1, 5, 8),),
                                             (torch.randn(1, 1, 8),))
    assert size_one.ones_of(general, batch_one) == [("L['x']", 0)]
    assert size_one.ones_of(general, both_one) == [("L['x']", 0), ("L['x']", 1)]
    assert size_one.ones_of(general, general) is None            # no dim at 1: not this case
    assert size_one.ones_of(batch_one, general) is None          # the special one does not serve the general


def test_a_graph_that_branches_at_size_one_is_not_matched():
    general, length_one = _outlines(BranchesAtOne().eval(), (torch.randn(3, 5, 8),), (torch.randn(3, 1, 8),))
    assert size_one.ones_of(general, length_one) is None


def test_an_argument_that_differs_at_size_one_is_not_matched():
    """The same ops, one argument computed differently at size 1 (a scale of 1/T there, 1/2 else)."""
    class Scaled(torch.nn.Module):
        def forward(self, x):
            return x * (1.0 / x.shape[1] if x.shape[1] == 1 else 0.5)

    general, length_one = _outlines(Scaled(), (torch.randn(2, 4),), (torch.randn(2, 1),))
    assert len(general.nodes) == len(length_one.nodes)
    assert size_one.ones_of(general, length_one) is None
