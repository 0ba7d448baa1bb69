"""One `tensor.empty` per user, so that one-shot bufferization gives each its own buffer.

`tensor.empty` and `tensor.cast` are pure, so CSE merges the identical ones of every layer into one
(a bf16 model's attention scores: each layer's zero-initialised batch-matmul dispatch writes into the
same cast of `tensor.empty(T, T)`). Bufferization then allocates that value once, and each dispatch
after the first writes into the buffer the earlier layer's result still lives in, so that result is
copied out first (BERT-base bf16, b16 T=128: the [192, T, T] scores before their reshape, ~6% of the
call). An empty tensor has no contents to share: each user gets its own, through its own casts.
"""
from __future__ import annotations

from mlir import ir

from ...ir.walk import ancestor_in, defining_op, walk

_EMPTY, _CAST = "tensor.empty", "tensor.cast"


def _of_empty(op) -> bool:
    """A tensor.empty, or a chain of casts of one."""
    while op is not None and op.name == _CAST:
        op = defining_op(op.operands[0])
    return op is not None and op.name == _EMPTY


def _users_by_ancestor(value: ir.Value, block: ir.Block) -> list[list]:
    """(owner, operand number) of `value`'s uses, grouped by the op of `block` they are in: the branches
    of one scf.if (a dispatch versioned on a head-view test) keep sharing one buffer."""
    groups: list[tuple[object, list]] = []
    for use in value.uses:
        top = ancestor_in(use.owner, block)
        group = next((g for a, g in groups if a == top), None)
        if group is None:
            groups.append((top, group := []))
        group.append((use.owner, use.operand_number))
    return [g for _, g in groups]


def split_empty_tensors(module_op) -> None:
    ops = [op.operation for op in walk(module_op) if op.operation.name in (_EMPTY, _CAST)]
    for op in reversed(ops):                    # a cast's users split before its source: each gets a chain
        if not _of_empty(op):
            continue
        for group in _users_by_ancestor(op.results[0], op.block)[1:]:
            with ir.InsertionPoint(op), op.location:
                clone = op.clone().results[0]
            for owner, number in group:
                owner.operands[number] = clone
