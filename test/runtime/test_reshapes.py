"""Reshapes that split or merge neighbouring dims run as views (lowering/loops/reshapes.py), the others as
before: every function of the lit test (test/passes/ftuner-reshapes-as-views.mlir, which checks the
rewritten IR) against numpy's reshape, on fresh random data, poisoned outputs and several T."""
from pathlib import Path

import numpy as np
import pytest

import ftuner_mlir

from .helpers import poisoned, random

SOURCE = (Path(__file__).parents[1] / "passes" / "ftuner-reshapes-as-views.mlir").read_text()


@pytest.fixture(scope="module")
def exe():
    return ftuner_mlir.compile(SOURCE)


@pytest.mark.parametrize("t", [1, 2, 7, 62, 128])
def test_heads_of_a_column_slice(exe, rng, t):
    qkv = random(rng, (16, t, 2304))
    got = exe["heads_of_a_slice"](qkv, out=poisoned((16, t, 12, 64)))
    np.testing.assert_array_equal(got, qkv[:, :, 768:1536].reshape(16, t, 12, 64))


@pytest.mark.parametrize("t", [1, 5, 62])
def test_merge_heads(exe, rng, t):
    x = random(rng, (16, t, 12, 64))
    np.testing.assert_array_equal(exe["merge_heads"](x, out=poisoned((16, t, 768))), x.reshape(16, t, 768))


@pytest.mark.parametrize("t", [1, 3, 31])
def test_split_rows(exe, rng, t):
    x = random(rng, (4 * t, 48))
    got = exe["split_rows"](x, out=poisoned((4, t, 48)))
    np.testing.assert_array_equal(got, x.reshape(4, t, 48))


@pytest.mark.parametrize("b, t", [(1, 1), (3, 7), (16, 31)])
def test_batch_and_length_split_and_merged(exe, rng, b, t):
    x = random(rng, (b * t, 48))
    ids = np.zeros((b, t), np.int64)
    np.testing.assert_array_equal(exe["split_batch_and_length"](x, ids, out=poisoned((b, t, 48))), x.reshape(b, t, 48))
    y = random(rng, (b, t, 3, 16))
    np.testing.assert_array_equal(exe["merge_batch_and_length"](y, out=poisoned((b * t, 48))), y.reshape(b * t, 48))


def test_reshapes_left_as_they_are_still_reshape(exe, rng):
    s = random(rng, (6, 4, 10))
    got = exe["two_dynamic_groups"](s, out=poisoned((2, 3, 4, 10)))
    np.testing.assert_array_equal(got, s.reshape(2, 3, 4, 10))
    s = random(rng, (10, 6))
    got = exe["not_neighbours"](s, out=poisoned((5, 4, 3)))
    np.testing.assert_array_equal(got, s.reshape(5, 4, 3))
