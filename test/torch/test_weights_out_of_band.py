"""No weight goes through MLIR text on the torch route: torch-mlir's import writes the weights once as raw
bytes (torch/import_worker.py) and the text only names them (ir/weights.py). A model with 12 MB of
weights compiles from a text of a few KB, no MLIR file in the module cache is larger, and the compiled
model matches float64 torch at batch sizes it was not exported with."""
import numpy as np
import torch
from torch.export import Dim

import ftuner_mlir.torch as ftorch

from .models import reference_f64, relative_error

TEXT_LIMIT = 1 << 20            # bytes: the whole text without its weights is far below


class Wide(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(509, 3001)                # ~6 MB of weights each way, odd sizes
        self.down = torch.nn.Linear(3001, 509)
        self.register_buffer("scale", torch.rand(509) + 0.5)

    def forward(self, x):
        return self.down(torch.relu(self.up(x))) * self.scale


def test_a_large_model_compiles_from_a_small_text(tmp_path, monkeypatch):
    monkeypatch.setenv("FTUNER_CACHE_DIR", str(tmp_path))
    torch.manual_seed(7)
    model = Wide().eval()
    weight_bytes = sum(p.numel() * 4 for p in model.state_dict().values())
    assert weight_bytes > 12e6
    compiled = ftorch.compile(model, (torch.randn(4, 509),), dynamic_shapes=({0: Dim("B", min=1, max=64)},))
    assert compiled.source_bytes < TEXT_LIMIT, f"{compiled.source_bytes} bytes of MLIR text"
    written = [(f, f.stat().st_size) for f in tmp_path.rglob("*.mlir")]
    assert all(size < TEXT_LIMIT for _, size in written), written
    reference = reference_f64(model)
    for batch in (1, 3, 17):                          # 4 was the example
        x = torch.randn(batch, 509)
        with torch.no_grad():
            want = reference(x.double())
        got = compiled(x)
        assert got.shape == (batch, 509) and relative_error(got, want) < 1e-5
        assert np.isfinite(got.numpy()).all()
