"""Timing: the columns of a case are measured in rounds; each round gives a median per column, and a
column's time is its best round (a burst of load from other tenants of this shared machine slows whole
rounds; the best round is one it did not hit).

Thread pools interfere: after a call, OpenBLAS's threads spin for up to ~0.1 s waiting for more work,
and on 2 cores they halve the speed of whatever runs next (seen: ftuner's Dense T=1 ran at 24 instead of
148 GFLOP/s right after numpy). So the libraries' columns come first in each round, and the machine is
left idle for `settle` seconds after each of them before the next column starts.
"""
from __future__ import annotations

import statistics
import time

LIBRARIES = ("numpy", "torch")     # columns whose thread pools keep spinning after they return


def median_times(columns: dict, min_time: float, rounds: int = 3, min_reps: int = 3, settle: float = 0.15) -> dict:
    """name -> seconds of `fn()`: the lowest of the per-round medians."""
    order = [n for n in columns if n in LIBRARIES] + [n for n in columns if n not in LIBRARIES]
    best = {name: float("inf") for name in columns}
    per_round = min_time / rounds
    for _ in range(rounds):
        for name in order:
            fn = columns[name]
            fn()                                   # warm-up: caches, page faults, thread pools
            samples = []
            while sum(samples) < per_round or len(samples) < min_reps:
                t0 = time.perf_counter()
                fn()
                samples.append(time.perf_counter() - t0)
            best[name] = min(best[name], statistics.median(samples))
            if name in LIBRARIES:
                time.sleep(settle)
    return best
