"""Measure one candidate register tile (run in a child process by the tuner: an exploratory
configuration that crashed LLVM or ran away would take only this process down).

    python -m ftuner_mlir.tuner.worker '{"target": {...}, "dtype": "f32", "mr": 8, "nr": 32}'
prints {"gflops": ..., "spread": ..., "compile_s": ..., "max_rel_err": ...} as JSON.
"""
from __future__ import annotations

import json
import math
import statistics
import sys
import time

import numpy as np

# Probe shapes: one square-ish block that fits L2, one skinny (few rows, wide), one odd; none taken
# from the benchmark's sweeps. The score is the geomean GFLOP/s over them.
PROBES = ((256, 512, 384), (16, 1024, 512), (97, 331, 257))


def measure(target, dtype: str, mr: int, nr: int, rounds: int = 5, reps: int = 3) -> dict:
    """Single-threaded (the register tile is a property of one core), timed in thread CPU time (time
    another tenant takes from this core does not count), `rounds` rounds per probe shape, each the best
    of `reps` calls: GFLOP/s is the geomean over probes of the median round; `spread` the largest
    (max - min) / median over the probes' rounds."""
    import ftuner_mlir
    from ftuner_mlir import models

    t0 = time.perf_counter()
    exe = ftuner_mlir.compile(models.matmul(dtype), target, tile=(mr, nr), num_threads=1)
    compile_s = time.perf_counter() - t0
    rng = np.random.default_rng(0)
    np_dtype = np.float32 if dtype == "f32" else np.float64
    rates, spreads, worst = [], [], 0.0
    for m, n, k in PROBES:
        a = rng.standard_normal((m, k)).astype(np_dtype)
        b = rng.standard_normal((k, n)).astype(np_dtype)
        out = np.full((m, n), np.nan, np_dtype)
        exe(a, b, out=out)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        worst = max(worst, float(np.linalg.norm(out - ref) / np.linalg.norm(ref)))
        per_round = []
        for _ in range(rounds):
            best = math.inf
            for _ in range(reps):
                t = time.thread_time()
                exe(a, b, out=out)
                best = min(best, time.thread_time() - t)
            per_round.append(2.0 * m * n * k / max(best, 1e-9) / 1e9)
        median = statistics.median(per_round)
        rates.append(median)
        spreads.append((max(per_round) - min(per_round)) / median)
    gflops = math.exp(sum(math.log(r) for r in rates) / len(rates))
    return {"gflops": gflops, "spread": max(spreads), "compile_s": compile_s, "max_rel_err": worst}


def main() -> None:
    from ftuner_mlir.hardware.cpu import CpuTarget

    config = json.loads(sys.argv[1])
    result = measure(CpuTarget(**config["target"]), config["dtype"], config["mr"], config["nr"])
    print(json.dumps(result))


if __name__ == "__main__":
    main()
