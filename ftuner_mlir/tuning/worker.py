"""Measure one candidate register tile (run in a child process by the tuner: an exploratory
configuration that crashed LLVM or ran away would take only this process down).

    python -m ftuner_mlir.tuning.worker '{"target": {...}, "dtype": "f32", "mr": 8, "nr": 32}'
prints {"gflops": ..., "compile_s": ..., "max_rel_err": ...} as JSON.
"""
from __future__ import annotations

import json
import math
import sys
import time

import numpy as np

# Probe shapes: one square-ish block that fits L2, one skinny (few rows, wide), one odd; none taken
# from the benchmark's sweeps. The score is the geomean GFLOP/s over them.
PROBES = ((256, 512, 384), (16, 1024, 512), (97, 331, 257))


def measure(target, dtype: str, mr: int, nr: int, min_time: float = 0.15) -> dict:
    import ftuner_mlir
    from ftuner_mlir import models

    t0 = time.perf_counter()
    exe = ftuner_mlir.compile(models.matmul(dtype), target, tile=(mr, nr))
    compile_s = time.perf_counter() - t0
    rng = np.random.default_rng(0)
    np_dtype = np.float32 if dtype == "f32" else np.float64
    rates, worst = [], 0.0
    for m, n, k in PROBES:
        a = rng.standard_normal((m, k)).astype(np_dtype)
        b = rng.standard_normal((k, n)).astype(np_dtype)
        out = np.empty((m, n), np_dtype)
        exe(a, b, out=out)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        worst = max(worst, float(np.linalg.norm(out - ref) / np.linalg.norm(ref)))
        best, spent = math.inf, 0.0
        while spent < min_time:
            t = time.perf_counter()
            exe(a, b, out=out)
            dt = time.perf_counter() - t
            best, spent = min(best, dt), spent + dt
        rates.append(2.0 * m * n * k / best / 1e9)
    gflops = math.exp(sum(math.log(r) for r in rates) / len(rates))
    return {"gflops": gflops, "compile_s": compile_s, "max_rel_err": worst}


def main() -> None:
    from ftuner_mlir.hardware.cpu import CpuTarget

    config = json.loads(sys.argv[1])
    result = measure(CpuTarget(**config["target"]), config["dtype"], config["mr"], config["nr"])
    print(json.dumps(result))


if __name__ == "__main__":
    main()
