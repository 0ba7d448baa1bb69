"""Work that depends on constants alone: ops of the public functions whose every input is a constant
(or computed from constants only), so each call would recompute the same value. Compile-time work
(constant weights packed into panels, transposes folded into the matmul's operand layout) should
leave none of them; this finds the ones left."""
from __future__ import annotations

from ..ir.walk import public_functions, walk

# ops that compute nothing per call: constants, views and shape queries, allocations without a fill
NO_WORK = frozenset({"arith.constant", "ml_program.global_load_const", "tensor.empty", "tensor.cast",
                     "tensor.expand_shape", "tensor.collapse_shape", "tensor.dim", "func.return"})


def _inputs(op) -> list:
    """The values `op` reads from outside itself: its operands and those its regions capture."""
    inside, used = set(), []
    for nested in (op, *walk(op)):
        inside.update(nested.results)
        for region in nested.regions:
            for block in region.blocks:
                inside.update(block.arguments)
        used += list(nested.operands)
    return [v for v in used if v not in inside]


def constant_only_ops(module_op) -> list:
    """Top-level ops of the public functions (with results) that read only constant-derived values and
    do work (not in NO_WORK), in order."""
    found = []
    for fn in public_functions(module_op):
        constant = set()
        for op in fn.regions[0].blocks[0].operations:
            if not op.results or not all(v in constant for v in _inputs(op)):
                continue
            constant.update(op.results)
            if op.operation.name not in NO_WORK:
                found.append(op)
    return found
