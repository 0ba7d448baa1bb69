"""Columns of the benchmark besides ftuner itself: padding to buckets (one static kernel per bucket of
64) and a static kernel compiled for exactly each shape. numpy and PyTorch run in their own
process (library_worker.py)."""
from __future__ import annotations

import time

import numpy as np

BUCKET = 64


def round_up(x: int, to: int = BUCKET) -> int:
    return -(-x // to) * to


class KernelCache:
    """Static kernels by dims, with the compile time of each."""

    def __init__(self, sweep, compile_fn):
        self.sweep, self.compile_fn = sweep, compile_fn
        self.kernels: dict = {}
        self.seconds: dict = {}

    def get(self, dims: dict):
        key = tuple(sorted(dims.items()))
        if key not in self.kernels:
            t0 = time.perf_counter()
            self.kernels[key] = self.compile_fn(self.sweep.static_model(dims))
            self.seconds[key] = time.perf_counter() - t0
        return self.kernels[key], self.seconds[key]


class Padded:
    """The industry default: each varying dim rounded up to a multiple of 64, one static kernel per
    bucket. Inputs are copied into zero-padded buffers and the output sliced back, as a server would."""

    def __init__(self, sweep, compile_fn):
        self.sweep = sweep
        self.cache = KernelCache(sweep, compile_fn)

    def bucket(self, case) -> dict:
        return {k: round_up(v) if k in self.sweep.varying else v for k, v in case.dims.items()}

    def wasted_fraction(self, case) -> float:
        return self.sweep.layout(self.bucket(case))[2] / case.flops - 1.0

    def runner(self, case, inputs):
        dims = self.bucket(case)
        kernel, _ = self.cache.get(dims)
        shapes, _, _ = self.sweep.layout(dims)
        buffers = [np.zeros(shape, a.dtype) for shape, a in zip(shapes, inputs)]
        window = tuple(slice(0, s) for s in case.out_shape)

        def run():
            for buf, a in zip(buffers, inputs):
                buf[tuple(slice(0, s) for s in a.shape)] = a
            return np.ascontiguousarray(kernel(*buffers)[window])
        return run
