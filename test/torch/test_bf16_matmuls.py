"""Tiny BERT and GPT-2 compiled with matmul_precision="bf16": the matmuls on the bf16 engine (AMX on the
host where it has it; AVX512-BF16 for the Zen 4 preset, which runs wherever `avx512_bf16` is) with bf16
operands and fp32 accumulation, softmax, layer norms and the residual stream in fp32 (what OpenVINO's
bf16 and torch.autocast do). Checked against the float64 model at lengths not used at export, with the
error of torch's own autocast (bf16 matmuls) on the same inputs as the yardstick. Without a bf16 engine
the option changes nothing: the fp32 tolerance applies."""
import numpy as np
import pytest

import ftuner_mlir.torch as ftorch      # before torch: one OpenMP runtime for torch and the compiled code
import torch
from torch.export import Dim
from ftuner_mlir.hardware.cpu import missing_host_features
from ftuner_mlir.hardware.targets import parse_target
from ftuner_mlir.ukernel.bf16_space import engine_in_use

from .models import MAX_T, ids, reference_f64, relative_error, tiny


@pytest.mark.parametrize("kind, target", [("bert", "host"), ("gpt2", "host"), ("gpt2", "amd-zen4")])
def test_bf16_matmuls_within_autocast_error(kind, target, rng):
    if target != "host" and missing_host_features(parse_target(target)):
        pytest.skip(f"this CPU lacks {missing_host_features(parse_target(target))}: {target} code cannot run here")
    model = tiny(kind)
    example = ids(np.random.default_rng(), 2, 24)
    out = ftorch.compile(model, (example,), dynamic_shapes=({1: Dim("T", min=2, max=MAX_T)},),
                         target=target, matmul_precision="bf16")
    engine = engine_in_use(parse_target(target))[0]
    reference = reference_f64(model)
    with torch.no_grad():
        for t in (5, 43, 100):              # the batch is fixed at export (issue 37), the length is not
            x = ids(rng, 2, t)
            got, want = out(x), reference(x)
            assert got.dtype == torch.float32 and torch.isfinite(got).all()
            error = relative_error(got, want)
            if engine == "none":
                assert error < 1e-4, f"T={t}: the option must change nothing without a bf16 engine"
                continue
            with torch.autocast("cpu", dtype=torch.bfloat16):
                autocast = relative_error(model(x).float(), want)
            assert 1e-5 < error < 2 * max(autocast, 1e-3), f"T={t}: {error:.2e} vs autocast {autocast:.2e}"
