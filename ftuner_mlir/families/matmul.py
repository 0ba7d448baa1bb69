"""The matmul family: C[b?, m, n] += A[b?, m, k] * B[b?, k, n], B optionally stored as N x K, with an
optional leading batch loop. uKernel sets are sized by (batch, m, n, k). A batch_matmul's operands may
be read as (batch, head) slices of 4-D tensors (HeadViews)."""
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


@dataclasses.dataclass(frozen=True)
class HeadViews:
    """A batched matmul's operands as (batch, head) slices of 4-D tensors instead of the
    [batch * heads, rows, cols] operands that transposes and collapses made of them (attention's Q, K^T
    and V are [B, T, H, D] projections permuted to [B, H, ., .]; its context goes back to [B, T, H, D]).
    `a`, `b`, `c`: for each, the permutation taking (batch, head, rows, cols) to the 4-D tensor's dims
    (dim i of that order is dim perm[i] of the tensor), or None for an operand passed as before. A B
    whose slice is stored columns first (K^T: N x K) goes through the transposing pack, any other
    through the copy pack; A and C must be stored rows first."""
    a: tuple[int, ...] | None = None
    b: tuple[int, ...] | None = None
    c: tuple[int, ...] | None = None

    def __post_init__(self):
        for name, perm in (("A", self.a), ("B", self.b), ("C", self.c)):
            if perm is not None and sorted(perm) != [0, 1, 2, 3]:
                raise ValueError(f"head view of {name} {perm} is not a permutation of 4 dims")
            if perm is not None and name != "B" and perm[2] > perm[3]:
                raise ValueError(f"head view of {name} {perm} stores its columns before its rows")

    @property
    def any(self) -> bool:
        return any(perm is not None for perm in (self.a, self.b, self.c))

    @property
    def b_transposed(self) -> bool:
        return self.b is not None and self.b[2] > self.b[3]

    def with_rows_in_place(self) -> "HeadViews":
        """Only the views whose matrix rows are contiguous in the 4-D tensor (its last dim is the matrix's
        stored column dim: the columns, K for a B stored columns first), which is what AMX tiles and the
        VNNI packs read in place; the others are dropped (passed as before)."""
        keep = lambda perm: perm if perm is not None and max(perm[2], perm[3]) == 3 else None  # noqa: E731
        return HeadViews(keep(self.a), keep(self.b), keep(self.c))

    def as_tuples(self) -> dict:
        """name -> permutation of each view given ("a", "b", "c")."""
        return {name: perm for name, perm in (("a", self.a), ("b", self.b), ("c", self.c)) if perm is not None}

    @property
    def tag(self) -> str:
        return "".join(f"_{name}v{''.join(map(str, perm))}"
                       for name, perm in (("a", self.a), ("b", self.b), ("c", self.c)) if perm)
