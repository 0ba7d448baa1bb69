"""Start-up: from a torch module to its first result, per system, cold and warm, each run in a fresh process.

    ftuner bench --compile-time [--models bert,gpt2]

ftuner: `ftuner_mlir.torch.compile` with batch and length dynamic, split into torch.export, the cache
key (a hash of the exported program and its weights), torch-mlir's import and the compile (MLIR passes,
LLVM, load); cold with an empty module cache, warm in a new process with the cache the cold run filled.
torch.compile(dynamic=True): its compilation happens in the first call; warm reuses Inductor's caches
(TORCHINDUCTOR_CACHE_DIR) from the cold run. OpenVINO (convert_model + compile_model, batch and length
dynamic) and ONNX Runtime (torch.onnx.export + InferenceSession), where installed. Every system then
gets a call at a new batch size (16 -> 1): the cost of a shape it has not seen. Peak memory: of the
process holding the model, and of its largest child process (ftuner's import and compiler children).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

SYSTEMS = ("ftuner", "torch_compile", "openvino", "onnxruntime")
WARM = ("ftuner", "torch_compile")        # the systems with an on-disk cache a second process reuses
BATCH, T, NEW_BATCH = 16, 43, 1
WORKER_TIMEOUT_S = 1800


def _ready(system: str, module, example):
    """(the callable, its timings so far) for `system`."""
    import torch

    if system == "ftuner":
        import ftuner_mlir.torch as ftorch
        dims = ({0: torch.export.Dim("B", min=1, max=64), 1: torch.export.Dim("T", min=2, max=512)},)
        compiled = ftorch.compile(module, (example,), dynamic_shapes=dims)
        return compiled, dict(compiled.timings)
    if system == "torch_compile":
        return torch.compile(module, dynamic=True), {}
    if system == "openvino":
        import openvino as ov
        model = ov.convert_model(module, example_input=example, input=[ov.PartialShape([-1, -1])])
        compiled = ov.Core().compile_model(model, "CPU")
        return (lambda ids: torch.from_numpy(compiled(ids.numpy())[0])), {}
    import onnxruntime as ort
    path = os.path.join(tempfile.mkdtemp(prefix="ftuner-startup-"), "model.onnx")
    torch.onnx.export(module, (example,), path, input_names=["ids"], output_names=["out"],
                      dynamic_axes={"ids": {0: "B", 1: "T"}}, dynamo=False)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return (lambda ids: torch.from_numpy(session.run(None, {"ids": ids.numpy()})[0])), {}


def measure(system: str, kind: str) -> dict:
    """In the worker process: the seconds from the built module to its first result, and of a first
    call at a new batch size."""
    if system == "ftuner":
        import ftuner_mlir.torch  # noqa: F401  before torch (one OpenMP runtime)
    import torch

    from .transformer_models import build

    module, _ = build(kind, 0)
    example = torch.randint(0, 1000, (BATCH, T))
    with torch.no_grad():
        started = time.perf_counter()
        run, timings = _ready(system, module, example)
        run(example)
        first = time.perf_counter() - started
        other = torch.randint(0, 1000, (NEW_BATCH, T))
        started = time.perf_counter()
        run(other)
        new_batch = time.perf_counter() - started
    return {"first_result_s": first, "new_batch_first_call_s": new_batch, **timings, **_peak_memory()}


def _peak_memory() -> dict:
    """Peak resident memory in MB of this process (the model, the export, the call) and of the largest
    of its children (ftuner: torch-mlir's import, the compiler)."""
    import resource
    own, children = (resource.getrusage(who).ru_maxrss / 1024 for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return {"peak_mb": round(own), "peak_child_mb": round(children)}


def _worker(system: str, kind: str, env: dict) -> dict:
    proc = subprocess.run([sys.executable, "-m", "ftuner_mlir.bench.startup", system, kind], capture_output=True,
                          text=True, env=env, timeout=WORKER_TIMEOUT_S)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["no output"])[-1][:300]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def available(system: str) -> bool:
    import importlib.util
    module = {"ftuner": "torch_mlir", "torch_compile": "torch"}.get(system, system)
    return importlib.util.find_spec(module) is not None


def measure_model(kind: str, systems=SYSTEMS) -> dict:
    rows = {}
    for system in [s for s in systems if available(s)]:
        with tempfile.TemporaryDirectory(prefix="ftuner-startup-cache-") as cache:
            env = dict(os.environ, FTUNER_CACHE_DIR=os.path.join(cache, "ftuner"),
                       TORCHINDUCTOR_CACHE_DIR=os.path.join(cache, "inductor"))
            rows[system] = {"cold": _worker(system, kind, env)}
            if system in WARM:
                rows[system]["warm"] = _worker(system, kind, env)
    return {"model": kind, "batch": BATCH, "T": T, "new_batch": NEW_BATCH, "systems": rows}


def format_table(result: dict) -> str:
    lines = [f"{result['model']}: seconds from the torch module to the first result (batch {result['batch']}, "
             f"T={result['T']}), then a first call at batch {result['new_batch']}",
             f"{'system':<14} {'run':<5} {'first result':>12} {'new batch':>9}  breakdown"]
    for system, runs in result["systems"].items():
        for run, row in runs.items():
            if "error" in row:
                lines.append(f"{system:<14} {run:<5} failed: {row['error']}")
                continue
            parts = ", ".join(f"{name[:-2]} {row[name]:.2f}" for name in ("export_s", "key_s", "import_s", "compile_s")
                              if name in row)
            parts += f"; peak MB {row['peak_mb']}" + (f", child {row['peak_child_mb']}" if row.get("peak_child_mb") else "")
            lines.append(f"{system:<14} {run:<5} {row['first_result_s']:>12.2f} {row['new_batch_first_call_s']:>9.2f}"
                         f"  {parts}")
    return "\n".join(lines)


def run(models, out=None) -> list[dict]:
    results = []
    for kind in models:
        result = measure_model(kind)
        print(format_table(result), flush=True)
        results.append(result)
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "startup.json"), "w") as f:
            json.dump(results, f, indent=1)
    return results


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1], sys.argv[2])))
