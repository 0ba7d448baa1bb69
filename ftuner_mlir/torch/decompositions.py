"""ATen ops rewritten before torch-mlir sees them, where its lowering leaves an op upstream MLIR cannot
compile.

`torch.cumsum` becomes `tm_tensor.scan` in torch-mlir's output, which no upstream pass lowers. Models
compute position ids (RoBERTa-family) and masks (decoders called without an attention mask) with it. It
is rewritten as a prefix sum by doubling (Hillis-Steele): ceil(log2(n)) steps of `x += x shifted by k`,
k = 1, 2, 4, ..., each step a pad, a slice and an add that the pipeline fuses and vectorizes across the
other dims. n is the dim's declared upper bound (2^31 when it has none: a step past n adds zeros).
Integer sums are exact; float sums are added in a tree order (error ~log2(n) ulps, not n).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

UNBOUNDED_STEPS = 31


def cumsum_by_doubling(x: torch.Tensor, dim: int, dtype=None) -> torch.Tensor:
    if dtype is not None:
        x = x.to(dtype)
    elif not x.dtype.is_floating_point:
        x = x.to(torch.int64)                   # torch.cumsum's own promotion of integers and bools
    dim = dim % max(x.dim(), 1)
    moved = x.movedim(dim, -1)
    n = moved.shape[-1]
    upper, shift = _upper_bound(n), 1
    while shift < upper:
        moved = moved + F.pad(moved, (shift, 0))[..., :n]
        shift *= 2
    return moved.movedim(-1, dim)


def _upper_bound(size) -> int:
    if isinstance(size, int):
        return size
    bound = size.node.shape_env.bound_sympy(size.node.expr).upper
    return int(bound) if bound.is_finite else 1 << UNBOUNDED_STEPS


TABLE = {torch.ops.aten.cumsum.default: cumsum_by_doubling}


def decompose(program):
    """The exported program with the ops of TABLE rewritten (unchanged when it has none)."""
    if not any(node.target in TABLE for node in program.graph.nodes if node.op == "call_function"):
        return program
    return program.run_decompositions(TABLE)
