"""The fast path of a call (arguments exactly like ones checked before skip the full check) must still
refuse every argument the full check refuses, and compute what it computes."""
import numpy as np
import pytest

import ftuner_mlir
from ftuner_mlir import models
from ftuner_mlir.runtime.memref import data_addresses

from .helpers import assert_matches, random


@pytest.fixture(scope="module")
def matmul():
    return ftuner_mlir.compile(models.matmul())


class ShapedLike:
    """Not an array, but with a `shape` like one (a torch tensor, say)."""

    def __init__(self, shape):
        self.shape = shape


def check(exe, a, b):
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert_matches(exe(a, b), ref, np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))


def test_data_addresses_are_the_arrays_data(rng):
    base = random(rng, (7, 9))
    read_only = base.copy()
    read_only.flags.writeable = False
    arrays = [base, base[2:], base[:, 3:], base[5:6], np.empty(0, np.float32), base.T, base[::2], read_only,
              base.view(np.matrix), np.zeros(3, np.int8)[1:]]
    assert data_addresses(arrays) == [a.__array_interface__["data"][0] for a in arrays]


@pytest.mark.parametrize("bad, message", [
    (lambda a: np.asfortranarray(a), "argument #0 must be C-contiguous"),
    (lambda a: np.repeat(a, 2, axis=1)[:, ::2], "argument #0 must be C-contiguous"),
    (lambda a: a.astype(np.float64), "argument #0 must have dtype float32, got float64"),
    (lambda a: a.astype(np.float32).view(np.int32), "argument #0 must have dtype float32, got int32"),
    (lambda a: a.astype(">f4"), "argument #0 must have dtype float32"),
    (lambda a: ShapedLike(a.shape), "argument #0 must be a numpy.ndarray, got ShapedLike"),
    (lambda a: ShapedLike([5, 3]), "argument #0 must be a numpy.ndarray, got ShapedLike"),
    (lambda a: a.tolist(), "argument #0 must be a numpy.ndarray, got list"),
])
def test_a_shape_seen_before_is_still_checked(matmul, rng, bad, message):
    a, b = random(rng, (5, 3)), random(rng, (3, 4))
    check(matmul, a, b)                          # the shapes (5, 3), (3, 4) now have a plan
    with pytest.raises(ValueError, match=message):
        matmul(bad(a), b)
    check(matmul, a, b)                          # and the plan still serves good arguments


@pytest.mark.parametrize("variant", ["view", "subclass", "read_only", "offset", "size_one_rows"])
def test_arguments_the_fast_path_leaves_to_the_full_check_are_exact(matmul, rng, variant):
    """Layouts the full check accepts that differ from the plan's (C-contiguous but not with the
    canonical strides, subclasses, read-only buffers, views into a larger array)."""
    m = 1 if variant == "size_one_rows" else 6
    a, b = random(rng, (m, 11)), random(rng, (11, 13))
    check(matmul, a, b)
    if variant == "view":
        big = random(rng, (m + 3, 11))
        big[1:m + 1] = a
        a = big[1:m + 1]
    elif variant == "subclass":
        a = a.view(np.matrix)
    elif variant == "read_only":
        a = a.copy()
        a.flags.writeable = False
    elif variant == "offset":
        buffer = np.zeros(a.size + 1, np.float32)
        buffer[1:] = a.ravel()
        a = buffer[1:].reshape(a.shape)
    else:                                        # rows of one element: any stride is C-contiguous
        tall = random(rng, (10, 11))
        tall[0] = a[0]
        a = tall[::5][:1]                        # strides (220, 4)
        assert a.flags.c_contiguous and a.strides != (44, 4)
    check(matmul, np.asarray(a), b)
    ref = np.asarray(a).astype(np.float64) @ b.astype(np.float64)
    assert_matches(np.asarray(matmul(a, b)), ref, np.abs(ref) + 1)


def test_each_call_returns_a_new_array(matmul, rng):
    a, b = random(rng, (4, 5)), random(rng, (5, 6))
    first, second = matmul(a, b), matmul(a, b)
    assert first is not second and not np.shares_memory(first, second)
    np.testing.assert_array_equal(first, second)
    first[...] = np.nan
    check(matmul, a, b)


def test_shapes_alternating_between_calls(matmul, rng):
    """The descriptor buffer keeps the last call's template: a change of shapes must replace it."""
    cases = [(random(rng, (m, k)), random(rng, (k, n))) for m, k, n in [(1, 1, 1), (17, 3, 29), (2, 64, 1), (17, 3, 29)]]
    for _ in range(3):
        for a, b in cases:
            check(matmul, a, b)
