"""Results of a multi-result linalg.generic that nothing reads are dropped, with the body ops that only
computed them and the output they wrote.

torch-mlir lowers softmax's max as `aten.max.dim`: the row maximum and its argmax in one generic, the
argmax never read. Two results keep the reduction a scalar loop (row_reductions.py rewrites rows with
one accumulator; LLVM cannot vectorize the argmax's select chain), and elementwise fusion leaves it
alone. Upstream's dead-result cleanup keeps a result whose output the body reads, as an argmax's
running index is; here such a result goes too when every body op that reads that output feeds only it.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import linalg

from ...ir.walk import walk


def _private_ops(body: list, position: int, terminator) -> list:
    """The body ops whose results reach only yield operand `position`, directly or through each other
    (a block's uses come after its defs, so one backward sweep finds them)."""
    private: list = []

    def private_use(use) -> bool:
        if use.owner == terminator:
            return use.operand_number == position
        return any(use.owner == o for o in private)

    for op in reversed(body):
        if len(op.results) and not len(op.regions) and all(private_use(u) for r in op.results for u in r.uses):
            private.append(op)
    return private


def _droppable(op, result: int) -> list | None:
    """The private ops of an unused result, when its output is read by them alone; else None."""
    if len(list(op.results[result].uses)):
        return None
    block = op.regions[0].blocks[0]
    body = list(block.operations)
    terminator = body[-1]
    private = _private_ops(body[:-1], result, terminator)
    inputs = len(op.operands) - len(op.results)
    if not all(any(use.owner == o for o in private) for use in block.arguments[inputs + result].uses):
        return None
    return private


def _rebuild_without(op, result: int, private: list):
    """A copy of `op` without `result`, its output and its private ops; the old op erased."""
    inputs = len(op.operands) - len(op.results)
    block = op.regions[0].blocks[0]
    body = list(block.operations)
    terminator = body[-1]
    kept_yield = [v for i, v in enumerate(terminator.operands) if i != result]
    outs = [v for i, v in enumerate(list(op.operands)[inputs:]) if i != result]
    maps = [m for i, m in enumerate(op.attributes["indexing_maps"]) if i != inputs + result]
    with ir.InsertionPoint(op), op.location:
        new = linalg.GenericOp([v.type for v in outs], list(op.operands)[:inputs], outs, ir.ArrayAttr.get(maps),
                               op.attributes["iterator_types"])
        for name in op.operation.attributes:
            if name not in ("indexing_maps", "iterator_types", "operandSegmentSizes"):
                new.attributes[name] = op.operation.attributes[name]
        args = [a for i, a in enumerate(block.arguments) if i != inputs + result]
        new_block = new.regions[0].blocks.append(*[a.type for a in args])
    terminator.erase()
    for dead in private:            # users first: `private` was collected backwards
        dead.erase()
    for old, fresh in zip(args, new_block.arguments):
        old.replace_all_uses_with(fresh)
    with ir.InsertionPoint(new_block), op.location:
        new_yield = linalg.YieldOp(kept_yield)
    for inner in list(block.operations):
        inner.move_before(new_yield)
    kept_results = [r for i, r in enumerate(op.results) if i != result]
    for old, fresh in zip(kept_results, new.results):
        old.replace_all_uses_with(fresh)
    op.erase()
    return new


def drop_unused_results(module_op) -> None:
    for op in [op for op in walk(module_op) if op.name == "linalg.generic" and len(op.results) > 1]:
        result = len(op.results) - 1
        while result >= 0 and len(op.results) > 1:
            private = _droppable(op, result)
            if private is not None:
                op = _rebuild_without(op, result, private)
            result -= 1
