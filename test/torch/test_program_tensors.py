"""torch/program_tensors.py: the exported program's tensors go to the import child as one raw file it
maps; the saved program holds stand-ins of a few bytes each."""
import io

import numpy as np

import ftuner_mlir.torch  # noqa: F401  before torch: one OpenMP runtime
import torch
from ftuner_mlir.torch import program_tensors


class Mixed(torch.nn.Module):
    """A large parameter, an integer and a bool buffer, a lifted constant, an empty buffer."""

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(257, 1031))
        self.register_buffer("steps", torch.arange(7, dtype=torch.int64) * 3 + 1)
        self.register_buffer("keep", torch.tensor([True, False, True]))
        self.register_buffer("nothing", torch.zeros(0, 5))
        self.offsets = torch.linspace(-1, 1, 1031)            # not registered: a lifted constant

    def forward(self, x):
        return (x @ self.weight.T).sum(-1) + self.steps.sum() + self.keep.sum() + (x + self.offsets).sum() \
            + self.nothing.sum()


def _tensors(program):
    return {**program.state_dict, **{k: v for k, v in program.constants.items() if isinstance(v, torch.Tensor)}}


def test_the_child_gets_every_tensor_back_from_the_file(tmp_path):
    model = Mixed()
    program = torch.export.export(model, (torch.randn(3, 1031),))
    originals = {name: value.clone() for name, value in _tensors(program).items()}
    assert len(originals) == 5
    path = tmp_path / "weights.bin"
    program_tensors.write(program, path)
    with program_tensors.stand_ins(program):
        saved = io.BytesIO()
        torch.export.save(program, saved)
    assert len(saved.getvalue()) < 64 << 10          # the 1 MB parameter is not in it
    assert all(torch.equal(_tensors(program)[name], value) for name, value in originals.items())   # restored

    loaded = torch.export.load(io.BytesIO(saved.getvalue()))
    assert not torch.equal(_tensors(loaded)["weight"], originals["weight"])      # a stand-in
    mapped = program_tensors.Mapped(str(path))
    mapped.restore(loaded, str(path))
    for name, value in originals.items():
        got = _tensors(loaded)[name]
        assert got.dtype == value.dtype and torch.equal(got, value), name
        if got.numel():
            offset = mapped.offset_of(got)
            assert offset is not None and offset % program_tensors.ALIGNMENT == 0
    assert isinstance(loaded.state_dict["weight"], torch.nn.Parameter)
    weight = loaded.state_dict["weight"]
    assert mapped.offset_of(weight[1:]) == mapped.offset_of(weight) + 1031 * 4     # a contiguous view of it
    assert mapped.offset_of(weight.T) is None and mapped.offset_of(torch.randn(4, 4)) is None
    x = torch.randn(3, 1031)
    with torch.no_grad():
        np.testing.assert_allclose(loaded.module()(x), model(x), rtol=1e-5)


def test_two_exports_into_one_folder_keep_their_own_weights(tmp_path, rng):
    """Each import writes a weights file of its own: the first text, compiled after the second export,
    still computes with the first model's weights."""
    import ftuner_mlir
    from ftuner_mlir.torch import exporting
    models = [torch.nn.Linear(13, 7) for _ in range(2)]
    texts = [exporting.to_linalg(exporting.export(m, (torch.randn(3, 13),), None, None), tmp_path) for m in models]
    assert len(list(tmp_path.glob("weights-*.bin"))) == 2
    x = rng.standard_normal((3, 13)).astype(np.float32)
    for model, text in zip(models, texts):
        got = ftuner_mlir.compile(text)(x)
        with torch.no_grad():
            want = model(torch.from_numpy(x)).double().numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
