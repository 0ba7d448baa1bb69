"""`ftuner bench-coexist`: torch eager and compiled code alternating in one process.

Each import order runs in a fresh process (the order decides whether torch gets its own OpenMP
runtime, see ftuner_mlir/torch/openmp.py): a 1024x768x768 float32 matmul by torch (oneDNN/MKL) and by
ftuner, each timed alone, then each timed right after the other ran. Reported: interleaved / alone
per side (1.00 = no interference), median of repeated calls, best of 3 rounds.
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time

ORDERS = {"ftuner-first": "one runtime (import ftuner_mlir.torch before torch)",
          "torch-first": "two runtimes (torch imported first)"}
M, K, N = 1024, 768, 768


def _median_ms(fn, before=None, reps: int = 25) -> float:
    samples = []
    for _ in range(reps):
        if before is not None:
            before()
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1e3


def measure(order: str, rounds: int = 3) -> dict:
    """In this process: the four timings (ms) for `order`, which must match how it imported."""
    if order == "ftuner-first":
        import ftuner_mlir.torch  # noqa: F401
        import torch
    else:
        import torch
        import ftuner_mlir.torch  # noqa: F401
    import ftuner_mlir
    from ftuner_mlir import models
    from ftuner_mlir.torch import openmp

    torch.manual_seed(0)
    a, b = torch.randn(M, K), torch.randn(K, N)
    exe = ftuner_mlir.compile(models.matmul())
    an, bn = a.numpy(), b.numpy()
    theirs, ours = (lambda: torch.mm(a, b)), (lambda: exe(an, bn))
    theirs(), ours()
    best = {"torch_alone": 1e9, "ftuner_alone": 1e9, "torch_after_ftuner": 1e9, "ftuner_after_torch": 1e9}
    for _ in range(rounds):
        for key, value in (("torch_alone", _median_ms(theirs)), ("ftuner_alone", _median_ms(ours)),
                           ("torch_after_ftuner", _median_ms(theirs, ours)),
                           ("ftuner_after_torch", _median_ms(ours, theirs))):
            best[key] = min(best[key], value)
    return dict(best, shared_runtime=openmp.shared, threads=torch.get_num_threads())


def run(python: str = sys.executable) -> list[dict]:
    rows = []
    print(f"torch.mm vs ftuner, {M}x{K}x{N} float32, alternating in one process (ms; ratio = interleaved/alone)")
    for order, what in ORDERS.items():
        out = subprocess.run([python, "-m", "ftuner_mlir.bench.coexist", order], capture_output=True, text=True,
                             check=True).stdout
        row = dict(json.loads(out.strip().splitlines()[-1]), order=order)
        rows.append(row)
        print(f"  {what}: torch {row['torch_alone']:.2f} -> {row['torch_after_ftuner']:.2f} "
              f"({row['torch_after_ftuner'] / row['torch_alone']:.2f}x), ftuner {row['ftuner_alone']:.2f} -> "
              f"{row['ftuner_after_torch']:.2f} ({row['ftuner_after_torch'] / row['ftuner_alone']:.2f}x)")
    return rows


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1])))
