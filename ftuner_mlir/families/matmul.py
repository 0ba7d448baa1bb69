"""The matmul family: C[b?, m, n] += A[b?, m, k] * B[b?, k, n], B optionally stored as N x K, with an
optional leading batch loop. uKernel sets are sized by (batch, m, n, k)."""
from __future__ import annotations

import dataclasses

from .family import Family


@dataclasses.dataclass(frozen=True)
class MatmulFamily(Family):
    batched: bool = False
    transpose_b: bool = False

    def problem(self, loop_sizes: dict[str, int]) -> tuple[int, int, int, int]:
        """(batch, m, n, k) from the sizes of this family's loops."""
        return loop_sizes.get("b", 1), loop_sizes["m"], loop_sizes["n"], loop_sizes["k"]


def _matmul(batched: bool, transpose_b: bool) -> MatmulFamily:
    lead = ("b",) if batched else ()
    name = ("batch_" if batched else "") + "matmul" + ("_transpose_b" if transpose_b else "")
    b_map = lead + (("n", "k") if transpose_b else ("k", "n"))
    return MatmulFamily(name, "linalg.batch_matmul" if batched else "linalg.matmul", lead + ("m", "n", "k"), ("k",),
                        (lead + ("m", "k"), b_map, lead + ("m", "n")), batched, transpose_b)


MATMUL_FAMILIES = tuple(_matmul(batched, transpose_b) for batched in (False, True) for transpose_b in (False, True))
