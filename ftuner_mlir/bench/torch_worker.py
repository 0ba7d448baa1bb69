"""The PyTorch column, measured in a process of its own: two OpenMP runtimes in one process (torch's
and ftuner's libiomp5) slow both, so the benchmark never imports torch itself.

    python -m ftuner_mlir.bench.torch_worker < request.json     (the benchmark starts it; see run.py)

The request names a sweep and its options; the answer (stdout, JSON) is the median time of each case,
timed like every other column (measure.median_times), on inputs of the same shapes.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def request_for(sweep_name: str, options) -> dict:
    return {"sweep": sweep_name, "t": list(options.t), "odd_count": options.odd_count, "seed": options.seed,
            "min_time": options.min_time}


def find_python(explicit: str | None = None) -> str | None:
    """An interpreter that can import torch: `explicit` (--torch-python), else this one if it can."""
    for python in ([explicit] if explicit else [sys.executable]):
        probe = subprocess.run([python, "-c", "import torch"], capture_output=True, timeout=120)
        if probe.returncode == 0:
            return python
    return None


def measure(python: str, request: dict) -> list[float]:
    """Seconds per case of the sweep, measured by `python` running this module."""
    env_path = str(Path(__file__).resolve().parents[2])          # this package, for torch's interpreter
    proc = subprocess.run([python, "-m", "ftuner_mlir.bench.torch_worker"], input=json.dumps(request),
                          capture_output=True, text=True, timeout=3600,
                          env={**os.environ, "PYTHONPATH": env_path})
    if proc.returncode != 0:
        raise RuntimeError(f"the PyTorch column failed:\n{proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout.splitlines()[-1])


def main() -> None:
    import numpy as np
    import torch

    from . import workloads
    from .measure import median_times

    req = json.loads(sys.stdin.read())
    builders = {"dense": lambda: workloads.dense(req["t"]), "bmm_tx64xt": workloads.bmm_tall,
                "bmm_txtx64": workloads.bmm_wide, "odd": lambda: workloads.odd(req["odd_count"])}
    sweep = builders[req["sweep"]]()
    rng = np.random.default_rng(req["seed"])
    times = []
    with torch.inference_mode():
        for case in sweep.cases:
            tensors = [torch.from_numpy(a) for a in sweep.inputs(case, rng)]
            times.append(median_times({"torch": lambda: sweep.reference(*tensors)}, req["min_time"])["torch"])
    print(json.dumps(times))


if __name__ == "__main__":
    main()
