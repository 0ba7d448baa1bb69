"""Dynamic broadcasts that are copies at run time are skipped.

torch-mlir expands a tensor to a shape known only at run time with a gather: a `linalg.generic` with
no inputs whose body reads `src[i0, select(X == 1, 0, i1), ...]` (`X` a size: broadcast when it is 1).
When no broadcast happens, which is every call of a model whose dims are not 1, that generic is a
full copy of `src` (BERT and GPT-2: four [B, H, T, 64]- or [B, H, T, T]-sized copies per layer). It
becomes

    scf.if (every dim of src equals the result's, no broadcast dim of size 1 is broadcast) {
      src                                 (no copy)
    } else {
      the gather, as before
    }
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ...ir.build import cast, dim
from ...ir.match import affine_maps, iterator_kinds
from ...ir.walk import defining_op, integer_constant, walk

_BODY_OPS = {"linalg.index", "arith.cmpi", "arith.select", "arith.constant", "tensor.extract", "linalg.yield"}
_CMPI_EQ = 0


def _inside(value, generic) -> bool:
    """Defined by the generic's body (an op or a block argument of it)."""
    owner = defining_op(value)
    holder = value.owner.owner if owner is None else owner.parent
    return holder is not None and holder.operation == generic.operation


def _loop_index(value, loop: int) -> bool:
    owner = defining_op(value)
    return owner is not None and owner.name == "linalg.index" and int(ir.IntegerAttr(owner.attributes["dim"]).value) == loop


def _broadcast_test(value, loop: int, generic):
    """For an index of the gather: None if it is loop `loop` itself; the `cmpi eq, X, 1` of
    `select(X == 1, 0, loop)` as (X, 1-operand); False for anything else."""
    if _loop_index(value, loop):
        return None
    owner = defining_op(value)
    if owner is None or owner.name != "arith.select":
        return False
    cond, then_value, else_value = owner.operands
    test = defining_op(cond)
    if not (integer_constant(then_value) == 0 and _loop_index(else_value, loop) and test is not None
            and test.name == "arith.cmpi" and int(ir.IntegerAttr(test.attributes["predicate"]).value) == _CMPI_EQ):
        return False
    size, one = test.operands
    if integer_constant(one) != 1 or _inside(size, generic):
        return False
    return size


def gather(op):
    """(src, per-dim broadcast tests) when `op` is a broadcast gather as described above; else None."""
    if op.operation.name != "linalg.generic" or len(op.operation.operands) != 1 or len(op.results) != 1:
        return None
    out_type = ir.RankedTensorType(op.results[0].type) if isinstance(op.results[0].type, ir.RankedTensorType) else None
    if out_type is None or any(kind != "parallel" for kind in iterator_kinds(op)):
        return None
    maps = affine_maps(op)
    if len(maps) != 1 or maps[0] != ir.AffineMap.get_identity(out_type.rank):
        return None
    block = op.regions[0].blocks[0]
    ops = list(block.operations)
    if any(inner.operation.name not in _BODY_OPS for inner in ops) or len(ops) < 2:
        return None
    yielded = defining_op(ops[-1].operands[0]) if len(ops[-1].operands) == 1 else None
    if yielded is None or yielded.name != "tensor.extract":
        return None
    src, indices = yielded.operands[0], list(yielded.operands)[1:]
    if _inside(src, op) or ir.RankedTensorType(src.type).rank != out_type.rank \
            or ir.RankedTensorType(src.type).element_type != out_type.element_type:
        return None
    tests = [_broadcast_test(value, loop, op) for loop, value in enumerate(indices)]
    if any(test is False for test in tests):
        return None
    return src, tests


def _size(value, shape: list, d: int) -> ir.Value:
    return dim(value, d) if shape[d] < 0 else arith.ConstantOp(ir.IndexType.get(), shape[d]).result


def _no_broadcast(op, src, tests) -> ir.Value:
    """i1: every dim of src equals the result's, and no select picks its 0 for a dim longer than 1."""
    out = op.operation.operands[0]
    src_shape, out_shape = ir.RankedTensorType(src.type).shape, ir.RankedTensorType(out.type).shape
    one = arith.ConstantOp(ir.IndexType.get(), 1).result
    result = arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result
    for d, test in enumerate(tests):
        same_static = 0 <= src_shape[d] == out_shape[d]
        if same_static and test is None:
            continue
        out_dim = _size(out, out_shape, d)
        if not same_static:
            same = arith.CmpIOp(arith.CmpIPredicate.eq, _size(src, src_shape, d), out_dim).result
            result = arith.AndIOp(result, same).result
        if test is not None:           # select(X == 1, 0, i) is i when X != 1 or the dim is 1 long
            not_one = arith.CmpIOp(arith.CmpIPredicate.ne, test, one).result
            single = arith.CmpIOp(arith.CmpIPredicate.eq, out_dim, one).result
            result = arith.AndIOp(result, arith.OrIOp(not_one, single).result).result
    return result


def skip_identity_broadcasts(module_op) -> None:
    for op in [op for op in walk(module_op) if op.operation.name == "linalg.generic"]:
        found = gather(op)
        if found is None:
            continue
        src, tests = found
        result_type = op.results[0].type
        with ir.InsertionPoint(op), op.location:
            branch = scf.IfOp(_no_broadcast(op, src, tests), [result_type], has_else=True)
            with ir.InsertionPoint(branch.then_block):
                scf.YieldOp([cast(src, result_type)])
        op.results[0].replace_all_uses_with(branch.results[0])
        with ir.InsertionPoint(branch.else_block), op.location:
            kept = scf.YieldOp([op.results[0]])
        op.operation.move_before(kept)
