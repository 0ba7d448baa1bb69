"""The import's decompositions done node by node in place (graph_rewrites.py) instead of torch's retrace:
the graph that comes out holds the ops the retrace makes, computes what the module does (run by torch on
fresh inputs at shapes not exported), and a graph the rewrite cannot take falls back to the retrace."""
import collections
import copy
import operator

import pytest

import ftuner_mlir.torch  # noqa: F401  before torch
import torch
from torch.export import Dim

from ftuner_mlir.torch import decompositions, exporting, graph_rewrites

from .models import ids, relative_error, tiny

aten = torch.ops.aten
DIMS = ({0: Dim("B", max=16), 1: Dim("T", max=64)},)


class Layers(torch.nn.Module):
    """Composite ops and ops of the table: linears over non-contiguous rows, attention's 4-D matmuls,
    a batch-broadcast matmul, split, layer_norm, softmax, masked_fill, dropout, a residual `+=`."""

    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(12, 24)
        self.out = torch.nn.Linear(8, 12, bias=False)
        self.norm = torch.nn.LayerNorm(12)
        self.proj = torch.nn.Parameter(torch.randn(12, 5))

    def forward(self, x):
        b, t, _ = x.shape
        q, k = self.qkv(x).view(b, t, 3, 8).transpose(1, 2).split(4, dim=-1)       # [B, 3, T, 4] each
        scores = torch.matmul(q, k.transpose(-1, -2)).masked_fill(x[:, None, :, :1] > 1, -1e4)
        mixed = torch.matmul(scores.softmax(-1), q).transpose(1, 2).reshape(b, t, 12)[..., :8]
        flat = self.norm(torch.nn.functional.dropout(self.out(mixed), 0.1, training=False))
        flat += x                                  # in place: its own functional twin here
        broadcast = torch.matmul(scores, flat[:, None, :, :4])                        # [B, 3, T, 4]
        return torch.matmul(flat, self.proj), torch.matmul(flat, flat.transpose(1, 2)), broadcast


def _core_aten() -> dict:
    """torch's table to the core ATen ops (torch-mlir's own table is loaded only by the import child:
    this process must not load torch-mlir, test_frontend.py checks)."""
    return dict(torch.export.default_decompositions().items())


def _table() -> dict:
    return decompositions.import_table(_core_aten())


def _ops(program) -> collections.Counter:
    """The graph's ops and how often each occurs; not clones: the retrace's functionalization copies a
    dropout's (eval) input where the rewrite reads it (torch-mlir folds a clone of a value away)."""
    return collections.Counter(str(node.target) for node in program.graph.nodes
                               if node.op == "call_function" and node.target != aten.clone.default)


@pytest.fixture(scope="module")
def layers():
    torch.manual_seed(0)
    return Layers().eval()


@pytest.mark.parametrize("kind", ["layers", "bert", "gpt2"])
def test_the_rewrite_makes_the_retraced_graph(kind, layers, rng):
    module, example = (layers, torch.randn(2, 6, 12)) if kind == "layers" else (tiny(kind), ids(rng, 2, 8))
    program = exporting.export(module, (example,), None, DIMS)
    retraced = exporting.export(module, (example,), None, DIMS).run_decompositions(_table())
    assert graph_rewrites.rewrite(program, _table()) > 0
    assert _ops(program) == _ops(retraced)
    assert not {"aten.linear.default", "aten.matmul.default", "aten.layer_norm.default"} & set(_ops(program))


def test_the_rewritten_graph_computes_the_module(layers, rng):
    program = exporting.export(layers, (torch.randn(2, 6, 12),), None, DIMS)
    graph_rewrites.rewrite(program, _table())
    run, reference = program.module(), copy.deepcopy(layers).double()
    for b, t in ((1, 1), (3, 7), (5, 13), (2, 31)):
        x = torch.from_numpy(rng.standard_normal((b, t, 12)).astype("float32"))
        with torch.no_grad():
            got, expected = run(x), reference(x.double())
        for g, e in zip(got, expected):
            assert g.shape == e.shape
            assert relative_error(g, e) < 1e-5


def test_sizes_reuse_the_nodes_that_make_them(layers):
    """Views name the program's own sym_size nodes of the input: one per dynamic dim, not one per use."""
    program = exporting.export(layers, (torch.randn(2, 6, 12),), None, DIMS)
    graph_rewrites.rewrite(program, _table())
    sizes = program.graph.find_nodes(op="call_function", target=aten.sym_size.int)
    assert len({(node.args[0], node.args[1]) for node in sizes}) == len(sizes) <= 2


def test_new_nodes_keep_the_models_source_line(layers):
    """Refusals name the model's line from the nodes' stack traces: decomposed nodes keep the old one's."""
    program = exporting.export(layers, (torch.randn(2, 6, 12),), None, DIMS)
    graph_rewrites.rewrite(program, _table())
    bmms = program.graph.find_nodes(op="call_function", target=aten.bmm.default)
    assert bmms and all("torch.matmul" in node.meta.get("stack_trace", "") for node in bmms)


def test_the_benchmark_models_import_without_a_retrace(rng, monkeypatch):
    """for_import of BERT (GPT-2 alike) runs no retrace: that took ~15 s of BERT-base's cold start."""
    program = exporting.export(tiny("bert"), (ids(rng, 2, 8),), None, DIMS)

    def no_retrace(*args, **kwargs):
        raise AssertionError("run_decompositions was called")

    monkeypatch.setattr(torch.export.ExportedProgram, "run_decompositions", no_retrace)
    program = decompositions.for_import(lambda: program, _core_aten())
    assert "aten.flatten.using_ints" in _ops(program)          # views_as_flatten ran after the rewrite


def test_an_in_place_op_others_see_goes_through_the_retrace():
    class InPlace(torch.nn.Module):
        def forward(self, x):
            y = torch.nn.functional.linear(x, torch.ones(4, 4))
            view = y[:, :2]
            view.add_(1)                       # y changes too
            return y

    def load():
        return exporting.export(InPlace(), (torch.randn(3, 4),), None, ({0: Dim("B")},))

    with pytest.raises(graph_rewrites.CannotRewrite, match="in-place"):
        graph_rewrites.rewrite(load(), _table())
    program = decompositions.for_import(load, _core_aten())
    assert "aten.add_.Tensor" not in _ops(program) and "aten.linear.default" not in _ops(program)


def test_a_decomposition_that_fixes_a_dynamic_size_goes_through_the_retrace():
    """A decomposition that reads a dynamic size as an int fixes it in the shape environment: the
    rewrite refuses, and for_import retraces a fresh copy of the program (not the spoiled one)."""
    fixing = {aten.gelu.default: lambda x, approximate="none": x * int(x.shape[1])}
    loads = []

    def load():
        loads.append(exporting.export(torch.nn.GELU(), (torch.randn(2, 6, 4),), None, ({1: Dim("T", max=64)},)))
        return loads[-1]

    with pytest.raises(graph_rewrites.CannotRewrite, match="gelu.*fixed a dynamic size"):
        graph_rewrites.rewrite(load(), fixing)
    decompositions.for_import(load, fixing)
    assert len(loads) == 3          # the copy above, the rewrite's, a fresh one for the retrace


class Frames(torch.nn.Module):
    """Frames of 4 after a 2-sample header, through a linear: its decomposition views the frames as
    rows, a size (B * F) with a symbol no input dim is (the input's length is 4*F + 2)."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.lin(x[:, 2:].reshape(x.shape[0], -1, 4))


def test_a_size_from_a_derived_dim_is_computed_not_retraced(rng):
    """A symbol that an input dim holds as `a*F + b` is (size - b) // a: no retrace, and the graph
    computes the module at sizes not exported."""
    module = Frames().eval()
    frames = Dim("F", max=64)                  # not "S": torch derives dims by name, and sympy.S exists
    program = exporting.export(module, (torch.randn(2, 4 * 3 + 2),), None, ({0: Dim("B", max=16), 1: 4 * frames + 2},))
    assert graph_rewrites.rewrite(program, _table()) > 0
    assert program.graph.find_nodes(op="call_function", target=operator.floordiv)
    run, reference = program.module(), copy.deepcopy(module).double()
    for b, frames in ((1, 1), (3, 5), (2, 13)):
        x = torch.from_numpy(rng.standard_normal((b, 4 * frames + 2)).astype("float32"))
        with torch.no_grad():
            got, expected = run(x), reference(x.double())
        assert got.shape == expected.shape == (b, frames, 3)
        assert relative_error(got, expected) < 1e-5
