"""Timing: the columns of a case take turns in rounds; each round gives a median per column, and a column's
time is its best round. A burst of load from other tenants of this shared machine slows whole rounds:
the best round is the one it did not hit, for every column alike."""
from __future__ import annotations

import statistics
import time


def median_times(columns: dict, min_time: float, rounds: int = 5, min_reps: int = 3) -> dict:
    """name -> seconds of `fn()`: the lowest of the per-round medians."""
    for fn in columns.values():
        fn()                                   # warm-up: caches, page faults, thread pools
    best = {name: float("inf") for name in columns}
    per_round = min_time / rounds
    for _ in range(rounds):
        for name, fn in columns.items():
            samples = []
            while sum(samples) < per_round or len(samples) < min_reps:
                t0 = time.perf_counter()
                fn()
                samples.append(time.perf_counter() - t0)
            best[name] = min(best[name], statistics.median(samples))
    return best
