"""Timing: every column of a case measured in interleaved rounds, median of all samples after warm-up."""
from __future__ import annotations

import statistics
import time


def median_times(columns: dict, min_time: float, rounds: int = 3, min_reps: int = 3) -> dict:
    """name -> median seconds of `fn()`. Columns take turns, so a burst of noise on this shared machine
    hits them all rather than one."""
    for fn in columns.values():
        fn()                                   # warm-up: caches, page faults, thread pools
    samples = {name: [] for name in columns}
    per_round = min_time / rounds
    for _ in range(rounds):
        for name, fn in columns.items():
            spent, reps = 0.0, 0
            while spent < per_round or reps < min_reps:
                t0 = time.perf_counter()
                fn()
                dt = time.perf_counter() - t0
                samples[name].append(dt)
                spent += dt
                reps += 1
    return {name: statistics.median(ts) for name, ts in samples.items()}
