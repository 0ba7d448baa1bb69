"""Empty tensors shared by at most SHARED_BY users before bufferization, so its analysis stays linear.

`tensor.empty` and `tensor.cast` are pure, so CSE merges the identical ones of every layer into one
(BERT-base: 36 empty tensors in its public function, up to 110 users each). One-Shot analysis then
puts every op that writes into a shared one in one alias set and checks each in-place decision
against the whole set: quadratic in the layers. eliminate-empty-tensors and one-shot-bufferize each
run that analysis (BERT-base on a Zen 3 VM: 3.6 s each, of the MLIR passes' 28.9 s). Each run of
SHARED_BY consecutive users keeps sharing one (each later run gets a clone, through its own casts):
the alias sets stay small, and within a run bufferization still writes in place into one buffer
(0.8 and 1.1 s). One empty tensor per user was as cheap to compile, but BERT-base's b16 T=128 call
then peaked at 2.95 GB instead of 1.54 (more buffers alive at once); runs of 8: 1.64-1.69 GB. The
branches of one scf.if (a dispatch versioned on a test) count as one user.
"""
from __future__ import annotations

from mlir import ir

from ...ir.walk import ancestor_in, defining_op, ops_named

_EMPTY, _CAST = "tensor.empty", "tensor.cast"
SHARED_BY = 8       # consecutive users (in program order) that keep sharing one


def _of_empty(op) -> bool:
    """A tensor.empty, or a chain of casts of one."""
    while op is not None and op.name == _CAST:
        op = defining_op(op.operands[0])
    return op is not None and op.name == _EMPTY


def _users_by_ancestor(value: ir.Value, block: ir.Block, position: dict) -> list[list]:
    """(owner, operand number) of `value`'s uses, grouped by the op of `block` they are in, in program
    order (a use list is in no useful order)."""
    groups: dict = {}
    for use in value.uses:
        groups.setdefault(ancestor_in(use.owner, block), []).append((use.owner, use.operand_number))
    return [groups[top] for top in sorted(groups, key=position.__getitem__)]


def split_empty_tensors(module_op) -> None:
    positions: dict = {}                        # block -> {its op: index}, built once per block
    for op in reversed(ops_named(module_op, (_EMPTY, _CAST))):   # a cast's users split before its source
        if not _of_empty(op):
            continue
        block = op.block
        if block not in positions:
            positions[block] = {child.operation: i for i, child in enumerate(block.operations)}
        for run in _runs(_users_by_ancestor(op.results[0], block, positions[block]))[1:]:
            with ir.InsertionPoint(op), op.location:
                clone = op.clone()
            positions[block][clone.operation] = positions[block][op]   # a cast's clone: a user of its source
            for owner, number in run:
                owner.operands[number] = clone.results[0]


def _runs(groups: list[list]) -> list[list]:
    """The uses that share one value: SHARED_BY consecutive groups each; a cast (split already, so it
    stands for its own run of users) alone."""
    casts, others = [], []
    for group in groups:
        (casts if all(owner.name == _CAST for owner, _ in group) else others).append(group)
    chunks = [others[i:i + SHARED_BY] for i in range(0, len(others), SHARED_BY)]
    return [[use for group in chunk for use in group] for chunk in [*chunks, *([c] for c in casts)]]
