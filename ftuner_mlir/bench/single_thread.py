"""Kernel quality without threading: the Dense sweep's module compiled sequential (num_threads=1) and
timed in this thread's CPU time (time another tenant takes from the core does not count), against the
FMA peak of one core measured the same way. Two threads add the OpenMP region and the split of the
work; this number is the uKernels' alone."""
from __future__ import annotations

import time

import numpy as np

from . import workloads
from .run import rel_err

DEFAULT_T = (1, 16, 128)


def _thread_seconds(fn, min_time: float, rounds: int = 5) -> float:
    """The best of `rounds` rounds of the mean CPU time of this thread per call."""
    fn()
    best = float("inf")
    for _ in range(rounds):
        calls, t0 = 0, time.thread_time()
        while calls < 3 or time.thread_time() - t0 < min_time / rounds:
            fn()
            calls += 1
        best = min(best, (time.thread_time() - t0) / calls)
    return best


def run(sweep, target, options, log=print) -> dict:
    """GFLOP/s and % of the single-core peak of the Dense cases whose T is in DEFAULT_T (or of the
    sweep's first and last case when none is), checked against float64 numpy first."""
    import ftuner_mlir

    from . import peak

    engine, core_peak = peak.bf16_peak(target) if sweep.dtype == "bf16" else ("FMA", peak.fma_peak(target, 1))
    exe = ftuner_mlir.compile(sweep.dynamic_model(), target, num_threads=1)
    cases = [c for c in sweep.cases if c.x in DEFAULT_T] or [sweep.cases[0], sweep.cases[-1]]
    rng = np.random.default_rng(options.seed)
    rows = []
    log(f"\nsingle thread ({sweep.title}, {sweep.dtype}; num_threads=1, thread CPU time; one core's {engine} "
        f"peak {core_peak:.1f} GFLOP/s)")
    for case in cases:
        inputs = sweep.inputs(case, rng)
        out = workloads.aligned_output(case.out_shape)
        err = rel_err(exe(*inputs, out=out), sweep.reference(*[a.astype(np.float64) for a in inputs]))
        gflops = case.flops / _thread_seconds(lambda: exe(*inputs, out=out), options.min_time) / 1e9
        rows.append(dict(x=case.x, dims=case.dims, gflops=gflops, pct_peak=100 * gflops / core_peak, rel_err=err))
        dims = ",".join(f"{k}={v}" for k, v in case.dims.items())
        log(f"  {sweep.name} {case.x:>4} {dims:<10} {gflops:8.1f} GFLOP/s  {100 * gflops / core_peak:5.1f}% of one "
            f"core's peak  err {err:.1e}")
    return dict(core_peak_gflops=core_peak, rows=rows)
