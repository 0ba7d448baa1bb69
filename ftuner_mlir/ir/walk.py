"""Walking the IR without recursion (nesting depth is the input's; Python's stack is not deep)."""
from __future__ import annotations

from typing import Iterator

from mlir import ir


def walk(op) -> Iterator:
    """Pre-order walk over all nested operations (as OpViews); safe to collect before mutating. An
    explicit stack, not recursion: nesting depth is the input's, and Python's stack is not deep."""
    stack = [iter(_children(op))]
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
            continue
        yield child
        stack.append(iter(_children(child.operation)))


def _children(op) -> list:
    return [child for region in op.regions for block in region.blocks for child in block.operations]


def functions(module_op) -> list:
    return [op for op in module_op.regions[0].blocks[0].operations if op.operation.name == "func.func"]


def public_functions(module_op) -> list:
    """The module's public func.funcs with a body (what callers reach)."""
    return [fn for fn in functions(module_op) if "sym_visibility" not in fn.attributes and fn.regions[0].blocks]


def defining_op(value):
    """The operation that defines `value` (an ir.Operation), or None for a block argument."""
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation
