"""A row of a reduction (a layernorm's mean, a softmax's max and sum) becomes a loop whose accumulators
are loop-carried values: the loop LLVM vectorizes.

Lowered as linalg loops, a reduction reads and writes its output element at every step, and LLVM
cannot keep it in a register (it cannot prove the output does not alias the input), so the row ran one
element at a time behind a store-to-load round trip. The rows parallel_generics.py cuts out (a
generic on [1, ..., 1, K] whose last loop is the only reduction) are rewritten on tensors:

    acc = out[0, ..., 0];  for k < K: acc = body(in_i[index_i(k)], acc);  out[0, ..., 0] = acc

with the combining op marked reassociable (`fastmath<reassoc>`), which lets LLVM's loop vectorizer
split the sum over vector lanes (the sum's rounding order changes, within float tolerance).

Where the body allows it, row_vectors.py writes the row as explicit vector code instead.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import scf, tensor

from ...ir.build import index, loop_extent
from ...ir.match import affine_maps, iterator_kinds
from ...ir.walk import walk
from . import row_vectors
from .row_vectors import REASSOC, REASSOCIABLE, indices


def _is_row_tile(op) -> bool:
    """All loops but the last are parallel with extent 1, the last is the reduction, and no output is
    indexed by it."""
    kinds = iterator_kinds(op)
    if kinds[-1] != "reduction" or len(op.results) == 0 or not row_vectors.row_tile_shape(op):
        return False
    last = len(kinds) - 1
    inputs = len(op.operands) - len(op.results)

    def reads_last(amap):
        return any(isinstance(e, ir.AffineDimExpr) and e.position == last for e in amap.results)
    maps = affine_maps(op)
    return any(reads_last(m) for m in maps[:inputs]) and not any(reads_last(m) for m in maps[inputs:])


def _rewrite(op) -> None:
    maps, last = affine_maps(op), len(iterator_kinds(op)) - 1
    inputs = len(op.operands) - len(op.results)
    ins, outs = list(op.operands)[:inputs], list(op.operands)[inputs:]
    body = op.regions[0].blocks[0]
    with ir.InsertionPoint(op), op.location:
        starts = [tensor.ExtractOp(out, indices(amap, None, last)).result for out, amap in zip(outs, maps[inputs:])]
        loop = scf.ForOp(index(0), loop_extent(op, last), index(1), starts)
        with ir.InsertionPoint(loop.body):
            k = loop.induction_variable
            mapping = {}
            for argument, operand, amap in zip(body.arguments[:inputs], ins, maps[:inputs]):
                mapping[argument] = tensor.ExtractOp(operand, indices(amap, k, last)).result
            for argument, acc in zip(body.arguments[inputs:], loop.inner_iter_args):
                mapping[argument] = acc
            yielded = []
            for inner in body.operations:
                if inner.operation.name == "linalg.yield":
                    yielded = [mapping.get(v, v) for v in inner.operands]
                    break
                if inner.operation.name == "linalg.index":
                    position = ir.IntegerAttr(inner.attributes["dim"]).value
                    mapping[inner.results[0]] = k if position == last else index(0)
                    continue
                clone = inner.operation.clone()
                for i, operand in enumerate(clone.operands):
                    if operand in mapping:
                        clone.operands[i] = mapping[operand]
                for old, new in zip(inner.results, clone.results):
                    mapping[old] = new
                if clone.name in REASSOCIABLE and any(a in list(clone.operands) for a in loop.inner_iter_args):
                    clone.attributes["fastmath"] = ir.Attribute.parse(REASSOC)
            scf.YieldOp(yielded)
        results = [tensor.InsertOp(value, out, indices(amap, None, last)).result
                   for value, out, amap in zip(loop.results, outs, maps[inputs:])]
    for old, new in zip(op.results, results):
        old.replace_all_uses_with(new)
    op.operation.erase()


def carry_row_accumulators(module_op, marker: str, vector_bits: int = 0) -> None:
    """Rewrite every row tile carrying attribute `marker` (the tiles parallel_generics cuts, the row ops
    row_chains places) as `vector_bits`-wide vector code where row_vectors.py can; the other reductions
    as scalar loops (the other elementwise rows are left to LLVM's loop vectorizer)."""
    for op in [op for op in walk(module_op) if op.operation.name == "linalg.generic" and marker in op.attributes]:
        if vector_bits and row_vectors.vectorize_row(op, vector_bits):
            continue
        if _is_row_tile(op):
            _rewrite(op)
