"""The library columns (numpy/OpenBLAS, PyTorch), each measured in a process of its own: two thread
pools in one process slow both (OpenMP runtimes, and OpenBLAS threads that spin after every call
halved ftuner's speed in the next measurement), so the benchmark's own process times only ftuner.

    python -m ftuner_mlir.bench.library_worker      (the benchmark starts it: LibraryColumn, run.py)

The first line on stdin names a sweep and its options; then each line names a case, and the answer
(a line on stdout, JSON) is its time, measured like every other column (measure.median_times) on
inputs of the same shapes.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def request_for(library: str, sweep_name: str, options) -> dict:
    return {"library": library, "sweep": sweep_name, "t": list(options.t), "odd_count": options.odd_count,
            "seed": options.seed, "min_time": options.min_time, "dtype": getattr(options, "dtype", "f32")}


def find_python(explicit: str | None = None) -> str | None:
    """An interpreter that can import torch: `explicit` (--torch-python), else this one if it can."""
    python = explicit or sys.executable
    probe = subprocess.run([python, "-c", "import torch"], capture_output=True, timeout=120)
    return python if probe.returncode == 0 else None


# ftuner's own process computes references on one OpenBLAS thread; the user's setting travels here
SAVED_OPENBLAS_THREADS = "FTUNER_BENCH_OPENBLAS_THREADS"


class LibraryColumn:
    """A library's process serving one sweep: `time(i)` measures case i there and returns its seconds.
    The benchmark asks right before it measures the other columns of the same case, so both see the
    same state of this shared machine (a whole sweep measured apart saw a different one)."""

    def __init__(self, python: str, request: dict):
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}   # this package
        # the library gets the thread count the user had, not the single thread `ftuner bench` gave
        # its own process for the float64 references
        saved = env.pop(SAVED_OPENBLAS_THREADS, None)
        if saved is not None:
            env.pop("OPENBLAS_NUM_THREADS", None)
            if saved:
                env["OPENBLAS_NUM_THREADS"] = saved
        self.proc = subprocess.Popen([python, "-m", "ftuner_mlir.bench.library_worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self._send(request)

    def _send(self, message: dict):
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"a library column's process ended:\n{self.proc.stderr.read()[-2000:]}")
        return json.loads(line)

    def time(self, case_index: int) -> float:
        return self._send({"case": case_index})["seconds"]

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def main() -> None:
    import numpy as np

    from . import workloads
    from .measure import median_times

    req = json.loads(sys.stdin.readline())
    builders = {"dense": lambda: workloads.dense(req["t"]), "bmm_tx64xt": workloads.bmm_tall,
                "bmm_txtx64": workloads.bmm_wide, "odd": lambda: workloads.odd(req["odd_count"])}
    sweep = builders[req["sweep"]]().in_dtype(req.get("dtype", "f32"))
    rng = np.random.default_rng(req["seed"])
    if req["library"] == "torch":
        import torch
        torch.set_grad_enabled(False)
        convert, version = _to_torch, torch.__version__
    else:
        convert, version = (lambda a: a), np.__version__
    print(json.dumps({"cases": len(sweep.cases), "version": version}), flush=True)
    for line in sys.stdin:
        case = sweep.cases[json.loads(line)["case"]]
        operands = [convert(a) for a in sweep.inputs(case, rng)]
        seconds = median_times({"lib": lambda: sweep.reference(*operands)}, req["min_time"])["lib"]
        print(json.dumps({"seconds": seconds}), flush=True)


def _to_torch(array):
    """A torch tensor of `array`; a bfloat16 one (ml_dtypes) through its bits (torch.from_numpy has no bf16)."""
    import torch
    if array.dtype.name == "bfloat16":
        return torch.from_numpy(array.view("uint16")).view(torch.bfloat16)
    return torch.from_numpy(array)


if __name__ == "__main__":
    main()
