"""A baseline process of the model benchmark: `python -m ftuner_mlir.bench.model_worker REQUEST_JSON`.

Builds the same model as the ftuner side (config, seed, inputs: model_demo.inputs) and times torch eager
or `torch.compile(dynamic=True)` (Inductor) on it for each T, in a process of its own: torch as a user
runs it, with its own OpenMP runtime and nothing of ftuner's loaded. Prints one JSON object: per T the
seconds (best round's median), the first call's seconds (torch.compile compiles there) and a checksum
of the output the ftuner side compares against.
"""
from __future__ import annotations

import json
import sys
import time

MODES = ("torch_eager", "torch_compile", "torch_autocast_bf16", "openvino_bf16")


def _autocast_bf16(module):
    """The model under torch.autocast(bf16): its matmuls on the bf16 engine (oneDNN's AMX kernels), the
    rest in fp32: what a torch user runs for the speed of bf16 on an fp32 model."""
    import torch

    def run(ids):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return module(ids).float()
    return run


def _openvino(module, example, precision: str):
    """The model converted by OpenVINO with batch and length dynamic, compiled for the CPU with
    INFERENCE_PRECISION_HINT `precision` (its default on an AMX CPU is bf16). Needs `pip install openvino`."""
    import openvino as ov
    import torch

    model = ov.convert_model(module, example_input=example, input=[ov.PartialShape([-1, -1])])
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": precision})

    def run(ids):
        return torch.from_numpy(compiled(ids.numpy())[0])
    return run


def measure(request: dict) -> dict:
    import torch

    from .measure import median_times
    from .transformer_models import build, inputs, layer_overrides

    kind, batch, ts = request["model"], request["batch"], request["ts"]
    module, cfg = build(kind, request["seed"], **{**request.get("config", {}),
                                                  **layer_overrides(kind, request.get("layers"))})
    builders = {"torch_eager": lambda: module, "torch_compile": lambda: torch.compile(module, dynamic=True),
                "torch_autocast_bf16": lambda: _autocast_bf16(module),
                "openvino_bf16": lambda: _openvino(module, inputs(kind, cfg, batch, ts[:1], request["seed"])[0], "bf16")}
    runner = builders[request["mode"]]()
    rows = []
    with torch.no_grad():
        for length, ids in zip(ts, inputs(kind, cfg, batch, ts, request["seed"])):
            started = time.perf_counter()
            out = runner(ids)
            first = time.perf_counter() - started
            seconds = median_times({"torch": lambda: runner(ids)}, request["min_time"])["torch"]
            row = {"T": length, "seconds": seconds, "first_call_s": first, "checksum": float(out.double().abs().sum())}
            if request["mode"].endswith("_bf16"):           # its accuracy: against the fp32 model in torch
                want = module(ids).double()
                row["rel_err"] = float((out.double() - want).abs().max() / want.abs().max())
            rows.append(row)
    return {"mode": request["mode"], "threads": torch.get_num_threads(), "torch": torch.__version__, "rows": rows}


def main(argv: list[str]) -> int:
    request = json.loads(argv[0])
    if request.get("mode") not in MODES:
        print(f"model_worker: mode must be one of {MODES}", file=sys.stderr)
        return 2
    print(json.dumps(measure(request)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
