"""Which tensor.reshapes the dims prove to be an expand or a collapse (lowering/reshapes._groups): the
side of fewer dims, each dim's run of the other side's dims, or None."""
import pytest

from ftuner_mlir.ir.build import DYNAMIC
from ftuner_mlir.lowering.loops.reshapes import _groups

D = DYNAMIC


@pytest.mark.parametrize("fewer, more, groups", [
    ([16, D, 768], [16, D, 12, 64], [[0], [1], [2, 3]]),        # GPT-2's heads split
    ([D, 48], [4, D, 48], [[0, 1], [2]]),                       # rows into (batch, T)
    ([D], [D, 12], [[0, 1]]),                                   # static dims after the dynamic one
    ([768, 5], [768, 1, 5], [[0], [1, 2]]),                     # a size-1 dim joins a group
    ([6, 4], [6, 4, 1, 1], [[0], [1, 2, 3]]),                   # trailing size-1 dims
    ([1, D], [1, 1, D], [[0], [1, 2]]),
    ([24], [2, 3, 4], [[0, 1, 2]]),                              # all static
])
def test_proven_groups(fewer, more, groups):
    assert _groups(fewer, more) == groups


@pytest.mark.parametrize("fewer, more", [
    ([6, D, D], [2, 3, D, D]),      # two dynamic groups: each pair's sizes are not proven equal
    ([D, 6], [D, 4, D]),            # 6 is not 4 x something static
    ([D, 6], [D, 4]),               # static sizes that do not line up
    ([6], [2, 4]),                  # products differ
    ([D, 5], [D, 5, 3]),            # a leftover static dim after a static group
    ([5, D], [5, D, D]),            # a leftover dynamic dim
])
def test_unproven_reshapes_stay(fewer, more):
    assert _groups(fewer, more) is None
