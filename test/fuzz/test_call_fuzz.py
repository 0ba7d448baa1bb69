"""Random shapes and layouts through compiled calls: every call gives the float64 numpy answer or, for
an argument the function cannot take, a ValueError, before native code runs. Seeded and bounded:
FTUNER_FUZZ_CASES (default 60) calls per module from FTUNER_SEED."""
import os

import numpy as np
import pytest

import ftuner_mlir
from ftuner_mlir import models

CASES = int(os.environ.get("FTUNER_FUZZ_CASES", "60"))
SEED = int(os.environ.get("FTUNER_SEED", "20261201"))
SIZES = [0, 1, 2, 3, 5, 7, 8, 13, 16, 17, 31, 32, 33, 64, 97, 128, 131]


def _layout(rng, a: np.ndarray):
    """The array itself, or one of the layouts a call must refuse: transposed, strided, wrong dtype,
    an extra dim, or a plain list."""
    kind = rng.choice(["same"] * 6 + ["fortran", "strided", "float64", "extra-dim", "list"])
    if kind == "fortran" and a.ndim >= 2 and min(a.shape[-2:]) > 1:
        return np.asfortranarray(a), kind
    if kind == "strided" and a.shape[-1] > 1:
        return np.repeat(a, 2, axis=-1)[..., ::2], kind
    if kind == "float64":
        return a.astype(np.float64), kind
    if kind == "extra-dim":
        return a[None], kind
    if kind == "list":
        return a.tolist(), kind
    return a, "same"


@pytest.mark.parametrize("model", ["matmul", "dense", "batch_matmul"])
def test_random_calls(model):
    rng = np.random.default_rng(SEED)
    if model == "dense":
        exe = ftuner_mlir.compile(models.dense(n="?", k="?"))
    else:
        exe = ftuner_mlir.compile(getattr(models, model)())
    outcomes = {"exact": 0, "refused": 0}
    for _ in range(CASES):
        m, n, k = (int(rng.choice(SIZES)) for _ in range(3))
        batch = int(rng.choice([1, 2, 5]))
        if model == "matmul":
            a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
            ref = a @ b
        elif model == "dense":
            a, b = rng.standard_normal((m, k)), rng.standard_normal((n, k))
            ref = a @ b.T
        else:
            a, b = rng.standard_normal((batch, m, k)), rng.standard_normal((batch, k, n))
            ref = a @ b
        args = [a.astype(np.float32), b.astype(np.float32)]
        bad_k = rng.random() < 0.15 and k > 0                      # an inconsistent reduction dim
        if bad_k:
            args[1] = np.ascontiguousarray(args[1][..., :-1, :] if model != "dense" else args[1][..., :-1])
        laid = [_layout(rng, x) for x in args]
        call_args = [x for x, _ in laid]
        # an empty (or single-element) strided view is still C-contiguous for numpy, and fine to take
        must_refuse = bad_k or any(kind in ("float64", "extra-dim", "list") or
                                   (kind in ("fortran", "strided") and not x.flags.c_contiguous)
                                   for x, kind in laid)
        try:
            got = exe(*call_args)
        except ValueError:
            assert must_refuse, f"refused a valid call: {[np.shape(x) for x in call_args]}"
            outcomes["refused"] += 1
            continue
        assert not must_refuse, f"accepted {[kind for _, kind in laid]}, bad_k={bad_k}"
        scale = np.abs(a) @ (np.abs(b).T if model == "dense" else np.abs(b)) if ref.size else ref
        assert got.shape == ref.shape and np.isfinite(got).all()
        assert (np.abs(got - ref) <= 1e-4 * np.maximum(scale, 1.0)).all()
        outcomes["exact"] += 1
    print(model, outcomes)
    assert outcomes["exact"] > 0 and outcomes["refused"] > 0
