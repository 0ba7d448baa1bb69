"""Compile time against model size: 1, 6, 24 chained Dense layers of one shape (one distinct uKernel
set), each compiled cold by a child process, then loaded from the cache by a fresh process.

    ftuner bench-compile [--layers 1,6,24]

The cold column is compile() from text to a loaded library (child start, MLIR passes, LLVM, link);
the breakdown comes from the manifest the child writes; the cache column is compile() in a new process
that finds the entry (Python's own start and imports excluded, so it is the cost a user pays per
module once their program runs).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CACHE_HIT = """
import time, ftuner_mlir
from ftuner_mlir import models
t0 = time.perf_counter()
exe = ftuner_mlir.compile(models.dense_chain({layers}))
print(time.perf_counter() - t0, exe.origin)
"""


def measure(layers: int, cache_dir: str) -> dict:
    import ftuner_mlir
    from ftuner_mlir import models

    env = dict(os.environ, FTUNER_CACHE_DIR=cache_dir)
    os.environ["FTUNER_CACHE_DIR"] = cache_dir
    t0 = time.perf_counter()
    exe = ftuner_mlir.compile(models.dense_chain(layers))
    cold = time.perf_counter() - t0
    manifest = json.loads((Path(exe.library).parent / "module.json").read_text())
    hit = subprocess.run([sys.executable, "-c", _CACHE_HIT.format(layers=layers)], env=env, capture_output=True,
                         text=True, timeout=600, check=True).stdout.split()
    if hit[1] != "cache":
        raise RuntimeError(f"expected a cache hit, got {hit[1]}")
    return {"layers": layers, "cold_s": cold, "cache_s": float(hit[0]), "seconds": manifest["seconds"],
            "units": manifest.get("units", 1), "library_bytes": Path(exe.library).stat().st_size}


def run(layer_counts, log=print) -> list[dict]:
    from ftuner_mlir.backends.cpu.toolchain import host_cpu, jobs

    saved = os.environ.get("FTUNER_CACHE_DIR")
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="ftuner-compile-bench-") as cache_dir:
            log(f"compile time of N chained Dense layers Y = X . W^T (W 768x768, fp32), CPU {host_cpu()}, "
                f"{jobs()} cores, fresh cache")
            log(f"{'layers':>6} {'cold s':>7} {'x 1 layer':>9} {'mlir':>6} {'llvm':>6} {'link':>6} {'units':>5} "
                f"{'.so KiB':>8} {'cache hit s':>11}")
            for n in layer_counts:
                r = measure(n, cache_dir)
                s = r["seconds"]
                llvm = s.get("translate", 0) + s.get("split", 0) + s.get("opt+llc", 0)
                base = rows[0]["cold_s"] if rows else r["cold_s"]
                log(f"{n:>6} {r['cold_s']:>7.2f} {r['cold_s'] / base:>9.2f} {s['mlir']:>6.2f} {llvm:>6.2f} "
                    f"{s['link']:>6.2f} {r['units']:>5} {r['library_bytes'] / 1024:>8.1f} {r['cache_s']:>11.3f}")
                rows.append(r)
    finally:
        if saved is None:
            os.environ.pop("FTUNER_CACHE_DIR", None)
        else:
            os.environ["FTUNER_CACHE_DIR"] = saved
    return rows
