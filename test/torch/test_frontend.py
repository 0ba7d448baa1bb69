"""The PyTorch front end on tiny BERT and GPT-2 (ftuner_mlir.torch.compile and torch.compile with
backend="ftuner"): compiled once, correct against the float64 model at sequence lengths and batch
sizes never used at export; bad calls and unsupported models get clear errors.

Tolerance 1e-4 relative to the output's largest magnitude: float32 rounding (6e-8) through 2 layers of
K <= 128 dot products, softmax and layer norms; measured errors are 1e-7..3e-6."""
import copy
import sys

import numpy as np
import pytest

import ftuner_mlir.torch as ftorch      # before torch: one OpenMP runtime for torch and the compiled code
import torch
from torch.export import Dim
from ftuner_mlir import compiler
from ftuner_mlir.torch import exporting
from ftuner_mlir.runtime.function import AssertionFailure

from .models import MAX_T, VOCAB, ids, reference_f64, relative_error, tiny

TOLERANCE = 1e-4


@pytest.fixture(scope="module", params=["bert", "gpt2"])
def compiled(request):
    model = tiny(request.param)
    example = ids(np.random.default_rng(), 2, 24)
    out = ftorch.compile(model, (example,), dynamic_shapes=({1: Dim("T", min=2, max=MAX_T)},))
    return model, out


def test_every_length_in_range_from_one_compilation(compiled, rng):
    model, out = compiled
    reference = reference_f64(model)
    before = compiler.compilations
    with torch.no_grad():
        for t in (2, 5, 17, 43, 100, MAX_T):             # 24 was the export's example
            x = ids(rng, 2, t)
            got = out(x)
            assert got.shape == (2, t, 64) and got.dtype == torch.float32
            assert relative_error(got, reference(x)) < TOLERANCE, f"T={t}"
    assert compiler.compilations == before               # no recompilation between shapes
    assert "torch_mlir" not in sys.modules               # the import ran in a child process


def test_calls_are_checked_before_native_code(compiled, rng):
    _, out = compiled
    with pytest.raises(ValueError, match=r"input #0 dim 1 is 129, outside the range 2..128"):
        out(ids(rng, 2, MAX_T + 1))
    with pytest.raises(ValueError, match="input #0 dim 1 is 1, outside the range 2..128"):
        out(ids(rng, 2, 1))
    with pytest.raises(ValueError, match="argument #0 must have dtype int64, got int32"):
        out(ids(rng, 2, 7).to(torch.int32))
    with pytest.raises(ValueError, match="argument #0 dim 0 must be 2"):
        out(ids(rng, 3, 7))                              # the batch was not declared dynamic
    with pytest.raises(AssertionFailure, match="index must be smaller than dim size"):
        out(torch.full((2, 7), VOCAB, dtype=torch.int64))   # a token id past the vocabulary


def test_non_contiguous_and_grad_inputs_are_taken(compiled, rng):
    model, out = compiled
    wide = ids(rng, 2, 40)
    x = wide[:, ::2]                                    # strided view: copied to contiguous
    with torch.no_grad():
        assert relative_error(out(x), reference_f64(model)(x.contiguous())) < TOLERANCE


@pytest.mark.parametrize("kind", ["gpt2"])
def test_torch_compile_backend(kind, rng):
    """dynamic=True makes batch and length symbolic: one compilation serves every batch size and
    length >= 2 (Dynamo itself specializes a size of 1, not tested here)."""
    model = tiny(kind, seed=1)
    reference = reference_f64(model)
    fast = torch.compile(model, backend="ftuner", dynamic=True)
    with torch.no_grad():
        fast(ids(rng, 2, 9))
        before = compiler.compilations
        for batch, t in ((2, 31), (3, 5), (3, 77), (2, 64), (7, 13)):
            x = ids(rng, batch, t)
            assert relative_error(fast(x), reference(x)) < TOLERANCE, f"batch {batch} T={t}"
    assert compiler.compilations == before


def test_torch_compile_of_a_model_called_with_positional_tensors(rng):
    """A transformers model compiled directly: Dynamo names its input L['args'][0], not L['input_ids']."""
    model = tiny("bert", seed=2).model
    reference = reference_f64(model)
    fast = torch.compile(model, backend="ftuner", dynamic=True)
    with torch.no_grad():
        for batch, t in ((2, 9), (3, 17)):
            x = ids(rng, batch, t)
            assert relative_error(fast(x).last_hidden_state, reference(x).last_hidden_state) < TOLERANCE


@pytest.mark.parametrize("kind", ["bert", "gpt2"])
def test_batch_and_length_dynamic_together(kind, rng):
    """One compilation for every (batch, length): torch-mlir's view of two dynamic dims is rewritten
    before it can type one of them 1 (decompositions.views_as_flatten)."""
    model = tiny(kind, seed=3)
    reference = reference_f64(model)
    out = ftorch.compile(model, (ids(rng, 2, 8),),
                         dynamic_shapes=({0: Dim("B", min=1, max=32), 1: Dim("T", min=1, max=MAX_T)},))
    before = compiler.compilations
    with torch.no_grad():
        for batch, t in ((1, 1), (1, MAX_T), (3, 7), (5, 13), (32, 2), (17, 101), (2, 8)):
            x = ids(rng, batch, t)
            got = out(x)
            assert got.shape == (batch, t, 64)
            assert relative_error(got, reference(x)) < TOLERANCE, f"batch {batch} T={t}"
    assert compiler.compilations == before


def test_torch_compile_of_a_sum_of_sizes(rng):
    """Dynamo records `sum()` of sizes as torch.sym_sum, which torch.export cannot save: written as adds."""
    class Concat(torch.nn.Module):
        def forward(self, a, b):
            n = sum([a.shape[1], b.shape[1], 1])
            return torch.cat([a, b, torch.ones(a.shape[0], 1)], 1) * n

    fast = torch.compile(Concat(), backend="ftuner", dynamic=True)
    for rows, p, q in ((2, 3, 4), (3, 5, 7), (7, 11, 2)):
        a, b = (torch.from_numpy(rng.standard_normal((rows, k)).astype("float32")) for k in (p, q))
        assert relative_error(fast(a, b), Concat()(a.double(), b.double())) < TOLERANCE


def test_unsupported_ops_are_named():
    class Sort(torch.nn.Module):
        def forward(self, x):
            return torch.sort(x, 1).values

    with pytest.raises(ftorch.UnsupportedModel, match=r"the model needs tm_tensor\.sort at \S*test_frontend.py:"
                                                    r"\d+: ops of torch-mlir's own dialects"):
        ftorch.compile(Sort(), (torch.randn(2, 5),), dynamic_shapes=({1: Dim("T", min=2, max=64)},))


def test_cumsum_is_a_prefix_sum(rng):
    """torch.cumsum (tm_tensor.scan in torch-mlir's output) is rewritten before the import: RoBERTa's
    position ids from a padding mask, and a float prefix sum along the dynamic dim."""
    class PositionIds(torch.nn.Module):
        def forward(self, ids, values):
            mask = ids.ne(1).int()
            return (torch.cumsum(mask, dim=1) * mask).long() + 1, torch.cumsum(values, 1), values.cumsum(-1)

    t = Dim("T", min=1, max=200)
    out = ftorch.compile(PositionIds(), (torch.randint(0, 4, (2, 6)), torch.randn(2, 6, 3)),
                         dynamic_shapes=({1: t}, {1: t}))
    for size in (1, 2, 7, 64, 131, 200):
        ids = torch.from_numpy(rng.integers(0, 4, (2, size)))
        values = torch.from_numpy(rng.standard_normal((2, size, 3)).astype("float32"))
        got = out(ids, values)
        assert torch.equal(got[0], PositionIds()(ids, values)[0]), size
        reference = torch.cumsum(values.double(), 1)
        assert relative_error(got[1], reference) < TOLERANCE, size
        assert relative_error(got[2], torch.cumsum(values.double(), -1)) < TOLERANCE, size


def test_cumsum_over_a_dim_without_upper_bound(rng):
    """A length declared without a maximum (as Dynamo declares it) takes 31 doubling steps: each holds the
    tensor's own size (a pad by up to 2^30 elements ran out of memory), exact at 1, primes and 300."""
    class Prefix(torch.nn.Module):
        def forward(self, ids, values):
            mask = ids.ne(1).int()
            return (torch.cumsum(mask, dim=1) * mask).long() + 1, torch.cumsum(values, 1)

    t = Dim("T", min=1)
    out = ftorch.compile(Prefix(), (torch.randint(0, 4, (2, 6)), torch.randn(2, 6, 3)),
                         dynamic_shapes=({1: t}, {1: t}))
    for size in (1, 2, 7, 131, 300):
        ids = torch.from_numpy(rng.integers(0, 4, (2, size)))
        values = torch.from_numpy(rng.standard_normal((2, size, 3)).astype("float32"))
        got = out(ids, values)
        assert torch.equal(got[0], Prefix()(ids, values)[0]), size
        assert relative_error(got[1], torch.cumsum(values.double(), 1)) < TOLERANCE, size


def test_op_names_inside_string_literals_are_not_ops(rng):
    """torch-mlir guards a matmul of two dynamic contracting dims with `cf.assert ..., "mismatching
    contracting dimension for torch.aten.mm"`: text, not an op left over."""
    class MatMul(torch.nn.Module):
        def forward(self, a, b):
            return torch.mm(a, b)

    k = Dim("K", min=2, max=64)
    out = ftorch.compile(MatMul(), (torch.randn(3, 5), torch.randn(5, 4)), dynamic_shapes=({1: k}, {0: k}))
    for size in (2, 17, 64):
        a, b = (torch.from_numpy(rng.standard_normal(s).astype("float32")) for s in ((3, size), (size, 4)))
        assert relative_error(out(a, b), a.double() @ b.double()) < TOLERANCE, size


class _Linear(torch.nn.Linear):
    def __init__(self):
        super().__init__(8, 5)


class _MatMul3d(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(8, 6))

    def forward(self, x):
        return torch.matmul(x, self.weight)


class _Flatten(torch.nn.Module):
    def forward(self, x):
        return x.reshape(-1, 8).sum(0) + x.flatten(0, 1).amax(0)


class _Attention(torch.nn.Module):
    def forward(self, q, k):
        return torch.matmul(q, k.transpose(-1, -2)).softmax(-1)


@pytest.mark.parametrize("model, shapes", [
    (_Linear, ["BT8"]), (_Linear, ["BHT8"]), (_MatMul3d, ["BT8"]), (_Flatten, ["BT8"]), (_Attention, ["BHT8", "BHT8"])])
def test_ops_over_several_dynamic_dims(model, shapes, rng):
    """Linear, matmul, flatten and attention with batch, heads and length all dynamic: exact at sizes
    never exported, 1 and primes included."""
    torch.manual_seed(0)
    module = model().eval()
    dims = {"B": Dim("B", min=1, max=32), "H": Dim("H", min=1, max=8), "T": Dim("T", min=1, max=64)}

    def inputs(sizes):
        return tuple(torch.from_numpy(rng.standard_normal([sizes.get(c, 8) for c in shape]).astype("float32"))
                     for shape in shapes)

    dynamic = tuple({d: dims[c] for d, c in enumerate(shape) if c in dims} for shape in shapes)
    out = ftorch.compile(module, inputs({"B": 2, "H": 3, "T": 5}), dynamic_shapes=dynamic)
    reference = copy.deepcopy(module).double()
    for sizes in ({"B": 1, "H": 1, "T": 1}, {"B": 3, "H": 2, "T": 7}, {"B": 13, "H": 5, "T": 61}):
        args = inputs(sizes)
        with torch.no_grad():
            assert relative_error(out(*args), reference(*(a.double() for a in args))) < TOLERANCE, sizes


def test_dims_the_lowering_pins_are_a_compile_error():
    """A dim declared dynamic that the shape rules fix is refused, naming it (rules as the compiler's
    shape analysis writes them)."""
    rules = {"arg_dims": [[0, 1, 2]], "class_static": {1: 1}, "class_reason": {1: "a tensor.cast"}}
    ranges = [exporting.DimRange(0, 0, "s0", 1, 64), exporting.DimRange(0, 1, "s1", 2, 128)]
    with pytest.raises(ftorch.PinnedDims, match=r"dim 1 of input #0 \(declared dynamic, 2..128\) is fixed to 1 "
                                                r"by a tensor.cast") as err:
        exporting.check_dynamic_dims(rules, ranges)
    assert [(r.input, r.dim) for r in err.value.dims] == [(0, 1)]
    exporting.check_dynamic_dims({**rules, "class_static": {}}, ranges)


def test_multiple_outputs_int64_and_reductions(rng):
    """An embedding gather by int64 ids, softmax, layer norm, a float64 reduction and a tuple of results."""
    class Mixed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(50, 16)
            self.norm = torch.nn.LayerNorm(16)

        def forward(self, tokens, scores):
            h = self.norm(self.embed(tokens))
            return torch.softmax(h, -1), scores.double().sum(-1), tokens * 2

    torch.manual_seed(0)
    module = Mixed().eval()
    example = (torch.randint(0, 50, (3, 6)), torch.randn(3, 6))
    out = ftorch.compile(module, example, dynamic_shapes=({1: Dim("T", max=64)}, {1: Dim("T", max=64)}))
    for t in (2, 13, 64):
        tokens = torch.from_numpy(rng.integers(0, 50, (3, t)))
        scores = torch.from_numpy(rng.standard_normal((3, t)).astype("float32"))
        got = out(tokens, scores)
        with torch.no_grad():
            want = reference_f64(module)(tokens, scores.double())
        assert isinstance(got, tuple) and len(got) == 3
        assert relative_error(got[0], want[0]) < TOLERANCE
        assert got[1].dtype == torch.float64 and relative_error(got[1], want[1]) < 1e-6
        assert torch.equal(got[2], tokens * 2)


def test_shape_rules_are_checked_before_the_compile(monkeypatch):
    """A model the shape rules refuse costs its import, not a compile: the rules of the imported text are
    checked first (here the T dim is made static in them, as torch-mlir's casts once did)."""
    real = exporting.imported_rules

    def pinned(text):
        rules = real(text)
        rules["class_static"][rules["arg_dims"][0][1]] = 1
        return rules

    monkeypatch.setattr(exporting, "imported_rules", pinned)
    before = compiler.compilations
    with pytest.raises(ftorch.PinnedDims, match=r"dim 1 of input #0 \(declared dynamic, 2..64\) is fixed to 1"):
        ftorch.compile(tiny("bert", seed=23), (ids(np.random.default_rng(0), 2, 8),),
                       dynamic_shapes=({1: Dim("T", min=2, max=64)},), cache=False)
    assert compiler.compilations == before


def test_a_module_that_refuses_its_own_example_is_a_compile_error():
    """Shape rules that reject the export's example (a static size computed wrongly from dynamic ones)
    would make a module that refuses every call: compile() refuses it instead."""
    from ftuner_mlir.torch import exporting

    rules = {"name": "main", "args": [{"dtype": "float32", "shape": [None, None]}, {"dtype": "float32", "shape": [3]}],
             "arg_dims": [[0, 1], [2]], "class_static": {1: 1024}, "class_reason": {}}
    with pytest.raises(ftorch.UnsupportedModel, match=r"refuses the export's own example inputs \(@main: argument "
                                                      r"#0 dim 1 must be 1024 \(fixed by the function body\), got 5\)"):
        exporting.check_example(rules, (torch.zeros(2, 5), 7), {"bias": torch.zeros(3)})
    exporting.check_example({**rules, "class_static": {}}, (torch.zeros(2, 5), 7), {"bias": torch.zeros(3)})
