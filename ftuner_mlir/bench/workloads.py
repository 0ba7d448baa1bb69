"""The benchmark's sweeps: the paper's Dense and BatchMatmul workloads, and odd (prime) matmul shapes."""
from __future__ import annotations

import dataclasses
import operator
from typing import Callable

import numpy as np

from .. import models
from ..runtime.function import aligned_empty

BMM_T = (5, 24, 43, 62, 81, 100, 119, 128)
PRIMES_TO_2048 = [p for p in range(2, 2049) if all(p % d for d in range(2, int(p ** 0.5) + 1))]


@dataclasses.dataclass(frozen=True)
class Case:
    x: int                                # the sweep's x axis: T, or the case index for odd shapes
    dims: dict                            # the varying dims of this case (m, n, k)
    shapes: tuple[tuple[int, ...], ...]   # argument shapes
    out_shape: tuple[int, ...]
    flops: float


@dataclasses.dataclass(frozen=True)
class Sweep:
    name: str
    title: str
    model: Callable[..., str]             # dims -> MLIR text; "?" for a dynamic dim
    layout: Callable[[dict], tuple]       # dims -> (argument shapes, output shape, flops)
    reference: Callable                   # the same computation with `@` (numpy and torch alike)
    varying: tuple[str, ...]              # dims compiled as "?" in the compiled-once module
    cases: tuple[Case, ...] = ()
    weight: int | None = None             # the argument that is a layer's weight (the prepacked column)
    dtype: str = "f32"                    # the operands' ("bf16": bf16 operands, fp32 accumulation and result)

    def with_cases(self, xs_and_dims) -> "Sweep":
        cases = tuple(Case(x, dims, *self.layout(dims)) for x, dims in xs_and_dims)
        return dataclasses.replace(self, cases=cases)

    def in_dtype(self, dtype: str) -> "Sweep":
        if dtype not in ("f32", "bf16"):
            raise ValueError(f"sweep dtype must be f32 or bf16, got {dtype!r}")
        return dataclasses.replace(self, dtype=dtype)

    def dynamic_model(self) -> str:
        """The compiled-once module: varying dims dynamic, the others as in the cases."""
        return self.model(**{k: "?" if k in self.varying else v for k, v in self.cases[0].dims.items()}, dtype=self.dtype)

    def static_model(self, dims: dict) -> str:
        return self.model(**dims, dtype=self.dtype)

    def inputs(self, case: Case, rng) -> list[np.ndarray]:
        """Fresh operands, 64-byte aligned as torch's allocator gives them (every column gets the same):
        numpy's own 16-byte alignment splits AMX tile rows over two cache lines (the bf16 Dense at
        T = 128, single-threaded: 0.94 against 1.41 TFLOP/s aligned)."""
        arrays = [rng.standard_normal(s, dtype=np.float32) for s in case.shapes]
        if self.dtype == "bf16":
            import ml_dtypes
            arrays = [a.astype(ml_dtypes.bfloat16) for a in arrays]
        return [_aligned_copy(a) for a in arrays]


def aligned_output(shape) -> np.ndarray:
    """An fp32 output poisoned with NaN, 64-byte aligned like the inputs."""
    out = aligned_empty(shape, np.float32)
    out[...] = np.nan
    return out


def _aligned_copy(array: np.ndarray) -> np.ndarray:
    out = aligned_empty(array.shape, array.dtype)
    out[...] = array
    return out


def _dense_layout(d):
    m, n, k = d["m"], 2304, 768
    return ((m, k), (n, k)), (m, n), 2.0 * m * n * k


def _bmm_layout(d):
    b, m, n, k = 192, d["m"], d["n"], d["k"]
    return ((b, m, k), (b, k, n)), (b, m, n), 2.0 * b * m * n * k


def _matmul_layout(d):
    m, n, k = d["m"], d["n"], d["k"]
    return ((m, k), (k, n)), (m, n), 2.0 * m * n * k


def dense(ts) -> Sweep:
    sweep = Sweep("dense", "Dense X[16T x 768] . W[2304 x 768]^T", lambda m, dtype: models.dense(2304, 768, dtype, m=m),
                  _dense_layout, lambda x, w: x @ w.T, ("m",), weight=1)
    return sweep.with_cases((t, dict(m=16 * t)) for t in ts)


def _bmm(dtype="f32", **dims) -> str:
    return models.batch_matmul(dtype, batch=192, **dims)


def bmm_tall(ts=BMM_T) -> Sweep:
    sweep = Sweep("bmm_tx64xt", "BatchMatmul [192,T,64] x [192,64,T]", lambda m, n, k, dtype: _bmm(dtype, m=m, n=n, k=k),
                  _bmm_layout, operator.matmul, ("m", "n"))
    return sweep.with_cases((t, dict(m=t, n=t, k=64)) for t in ts)


def bmm_wide(ts=BMM_T) -> Sweep:
    sweep = Sweep("bmm_txtx64", "BatchMatmul [192,T,T] x [192,T,64]", lambda m, n, k, dtype: _bmm(dtype, m=m, n=n, k=k),
                  _bmm_layout, operator.matmul, ("m", "k"))
    return sweep.with_cases((t, dict(m=t, n=64, k=t)) for t in ts)


def odd(count: int = 16, seed: int = 7) -> Sweep:
    """M, N, K drawn from 1 and the primes up to 2048 (fixed seed: the same shapes every run)."""
    pool = [1] + PRIMES_TO_2048
    rng = np.random.default_rng(seed)
    draws = [tuple(int(v) for v in rng.choice(pool, 3)) for _ in range(count)]
    sweep = Sweep("odd", "Odd shapes: M, N, K in {1} + primes <= 2048",
                  lambda m, n, k, dtype: models.matmul(dtype, m=m, n=n, k=k), _matmul_layout, operator.matmul, ("m", "n", "k"))
    return sweep.with_cases((i, dict(m=m, n=n, k=k)) for i, (m, n, k) in enumerate(draws))
