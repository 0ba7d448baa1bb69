"""tensor.pad with a constant as a fill of the padded tensor plus a linalg.copy of the source into its
interior. Bufferized as it is, a pad copies through MLIR's generic strided-copy runtime helper (slow:
one element at a time, and a dependency an exported module cannot ship); a linalg.copy lowers to loops
LLVM vectorizes."""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from ...ir.build import DYNAMIC, dim, index
from ...ir.walk import functions, walk

def _constant_padding(op) -> ir.Value | None:
    """The padding value when the pad's body yields one value defined outside it."""
    body = op.regions[0].blocks[0]
    ops = list(body.operations)
    if len(ops) != 1 or ops[0].operation.name != "tensor.yield":
        return None
    value = ops[0].operands[0]
    owner = value.owner
    inside = isinstance(owner, ir.Block) and owner == body
    return None if inside else value


def _decompose(op, padding: ir.Value) -> None:
    source = op.operands[0]
    src_type = ir.RankedTensorType(source.type)
    result_type = ir.RankedTensorType(op.results[0].type)
    lows, highs = iter(op.low), iter(op.high)
    static_low, static_high = list(op.attributes["static_low"]), list(op.attributes["static_high"])
    with ir.InsertionPoint(op), op.location:
        low = [next(lows) if v == DYNAMIC else v for v in static_low]
        high = [next(highs) if v == DYNAMIC else v for v in static_high]
        src_sizes = [dim(source, d) if n == DYNAMIC else n
                     for d, n in enumerate(src_type.shape)]
        padded = []
        for d, size in enumerate(result_type.shape):
            if size != DYNAMIC:
                continue
            total = src_sizes[d] if isinstance(src_sizes[d], ir.Value) else index(src_sizes[d])
            for extra in (low[d], high[d]):
                total = arith.AddIOp(total, extra if isinstance(extra, ir.Value) else index(extra)).result
            padded.append(total)
        empty = tensor.EmptyOp([s if s != DYNAMIC else padded.pop(0) for s in result_type.shape],
                               result_type.element_type).result
        filled = linalg.fill(padding, outs=[empty])
        dyn_offsets = [v for v in low if isinstance(v, ir.Value)]
        dyn_sizes = [v for v in src_sizes if isinstance(v, ir.Value)]
        static_offsets = [DYNAMIC if isinstance(v, ir.Value) else v for v in low]
        static_sizes = [DYNAMIC if isinstance(v, ir.Value) else v for v in src_sizes]
        ones = ir.DenseI64ArrayAttr.get([1] * src_type.rank)
        interior = tensor.ExtractSliceOp(src_type, filled, dyn_offsets, dyn_sizes, [],
                                         ir.DenseI64ArrayAttr.get(static_offsets),
                                         ir.DenseI64ArrayAttr.get(static_sizes), ones).result
        copied = linalg.copy(source, outs=[interior])
        result = tensor.InsertSliceOp(copied, filled, dyn_offsets, dyn_sizes, [],
                                      ir.DenseI64ArrayAttr.get(static_offsets),
                                      ir.DenseI64ArrayAttr.get(static_sizes), ones).result
    op.results[0].replace_all_uses_with(result)
    op.operation.erase()


def decompose_pads(module_op) -> None:
    """Every constant-padding tensor.pad of the public functions (the only place pads remain)."""
    for fn in functions(module_op):
        for op in [o for o in walk(fn) if o.operation.name == "tensor.pad"]:
            padding = _constant_padding(op)
            if padding is not None and isinstance(op.results[0].type, ir.RankedTensorType):
                _decompose(op, padding)
