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


_FAILING_PIPELINE = """
import ftuner_mlir.torch
from torch_mlir import ir, compiler_utils
from torch_mlir.dialects import torch as torch_d
from ftuner_mlir.torch import import_worker
import_worker._without_reproducer_print()
from torch_mlir import fx
print("runner:", fx.run_pipeline_with_repro_report.__module__, compiler_utils.run_pipeline_with_repro_report.__module__)
context = ir.Context()
torch_d.register_dialect(context)
with context:
    module = ir.Module.parse('''func.func @f(%a: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> {
      %0 = torch.aten.sin %a : !torch.vtensor<[2],f32> -> !torch.vtensor<[2],f32>
      return %0 : !torch.vtensor<[2],f32> }''')
try:
    compiler_utils.run_pipeline_with_repro_report(
        module, "builtin.module(torch-verify-linalg-on-tensors-backend-contract)", "the contract check")
except compiler_utils.TorchMlirCompilerError as err:
    print("raised:", str(err).splitlines()[0])
"""


def test_torch_mlir_passes_run_without_printing_the_module():
    """The import child runs torch-mlir's pipelines without their up-front print of the whole module
    (the weights as hex: 1.8 GB of BERT-base's import peak); a failing pipeline still raises torch-mlir's
    error, and the diagnostics are printed."""
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-c", _FAILING_PIPELINE], capture_output=True, text=True, timeout=300)
    assert "runner: ftuner_mlir.torch.import_worker ftuner_mlir.torch.import_worker" in proc.stdout   # both names
    assert "raised: the contract check failed with the following diagnostics:" in proc.stdout, proc.stderr[-2000:]
    assert "failed to legalize operation" in proc.stderr
