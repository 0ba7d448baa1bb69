"""The elementwise epilogue of an AMX dispatch, as vector code on each row strip of C.

The tile pass emits a bf16 matmul on AMX as a placeholder (codegen/bf16_matmul.py); when an elementwise
consumer of its result is fused into it (lowering/dispatch/epilogues.py: a bias, GELU, a residual add), the
placeholder's copy ends with that consumer as a 2-D generic on C, marked AMX_EPILOGUE_OP_ATTR, each
of its other operands a column vector (a bias), a matrix of C's shape (a residual) or a scalar. On
buffers, the AMX code runs it on each row strip (`rows` x the task's columns, in L2) right after the
strip's last K chunk: C is read, sent through every fused body, and written once, 16 fp32 a step, the
last step of a row masked; no pass over the whole result from memory remains.
"""
from __future__ import annotations

import dataclasses

from mlir import ir
from mlir.dialects import arith, memref, vector

from ..ir.build import float_constant, for_loop, index, read_vector
from ..ir.walk import defining_op

COLUMN, FULL, SCALAR = "column", "full", "scalar"
LANES = 16                      # fp32 per vector: one row of a C tile, one AVX-512 register
_DYN = ir.ShapedType.get_dynamic_size()
_DYN_STRIDE = ir.ShapedType.get_dynamic_stride_or_offset()


@dataclasses.dataclass
class Stage:
    """One fused consumer: its body (a block of scalar arith / math ops: the inputs, then its output)
    and which extra operand each input reads (None: C's value, when it is not read as the output)."""
    block: ir.Block
    inputs: list[int | None]


@dataclasses.dataclass
class AmxEpilogue:
    """The consumers fused into AMX dispatch `owner` (whose row-strip functions carry its name), in
    order; `kinds`: COLUMN, FULL or SCALAR per extra operand of the dispatch. `narrow`: the last one
    makes the result bf16, written to an output of its own (C is then fp32 scratch)."""
    owner: str
    kinds: list[str]
    stages: list[Stage]
    narrow: bool = False


def kind_of_rank(rank: int) -> str:
    return {0: SCALAR, 1: COLUMN, 2: FULL}[rank]


def extra_type(kind: str) -> ir.MemRefType:
    """An extra operand as the AMX code reads it: fp32, unit stride along the columns."""
    rank = {SCALAR: 0, COLUMN: 1, FULL: 2}[kind]
    strides = [_DYN_STRIDE] * (rank - 1) + [1] if rank else []
    return ir.MemRefType.get([_DYN] * rank, ir.F32Type.get(), ir.StridedLayoutAttr.get(_DYN_STRIDE, strides))


def _vector() -> ir.VectorType:
    return ir.VectorType.get([LANES], ir.F32Type.get())


def emit_strip(epilogue: AmxEpilogue, c: ir.Value, extras: list, lo: ir.Value, hi: ir.Value, j0: ir.Value,
               bn: ir.Value, out: ir.Value | None = None) -> None:
    """C rows [lo, hi), columns [j0, j0 + bn) through the epilogue: in place, or with `out` (narrowing)
    from C, the strip's scratch (its row lo and column j0 at [0, 0]), into `out`."""
    full = arith.MulIOp(arith.DivUIOp(bn, index(LANES)).result, index(LANES)).result
    rest = arith.SubIOp(bn, full).result
    mask = vector.CreateMaskOp(ir.VectorType.get([LANES], ir.IntegerType.get_signless(1)), [rest]).result

    def row(r, _):
        for_loop(index(0), full, index(LANES), [],
                 lambda k, _: _step(epilogue, c, extras, out, lo, r, j0, k, None) or [])
        _step(epilogue, c, extras, out, lo, r, j0, full, mask)    # nothing when rest is 0
        return []
    for_loop(lo, hi, index(1), [], row)


def _step(epilogue: AmxEpilogue, c, extras, out, lo, r, j0, k, mask) -> None:
    """LANES columns of row r from column j0 + k (under `mask`): read, every stage, written back."""
    zero = float_constant(ir.F32Type.get())
    col = arith.AddIOp(j0, k).result
    c_at = [arith.SubIOp(r, lo).result, k] if out is not None else [r, col]
    value = read_vector(_vector(), c, c_at, zero, mask)
    loaded = {}

    def operand(x: int) -> ir.Value:
        if x not in loaded:
            kind = epilogue.kinds[x]
            if kind == SCALAR:
                loaded[x] = vector.BroadcastOp(_vector(), memref.LoadOp(extras[x], []).result).result
            else:
                loaded[x] = read_vector(_vector(), extras[x], [r, col] if kind == FULL else [col], zero, mask)
        return loaded[x]
    for stage in epilogue.stages:
        value = vector_body(stage.block, [value if x is None else operand(x) for x in stage.inputs] + [value])
    permutation = ir.AffineMapAttr.get(ir.AffineMap.get_minor_identity(2, 1))
    dest, at = (out, [r, col]) if out is not None else (c, c_at)
    vector.TransferWriteOp(None, value, dest, at, permutation, ir.ArrayAttr.get([ir.BoolAttr.get(True)]), mask=mask)


def vector_body(block: ir.Block, arguments: list[ir.Value]) -> ir.Value:
    """The yielded value of scalar `block` computed on vectors: its arguments bound to `arguments`,
    each op made again with vector types (a constant as a splat)."""
    mapping = dict(zip(block.arguments, arguments))

    def vec(value: ir.Value) -> ir.Value:
        """A body value; a constant from outside the body (CSE moves them out) as a splat."""
        if value not in mapping:
            owner = defining_op(value)
            if owner is None or owner.name != "arith.constant":
                raise ValueError(f"an AMX epilogue body reads {value} from outside (only constants may be)")
            scalar = owner.clone().results[0]
            mapping[value] = vector.BroadcastOp(ir.VectorType.get([LANES], scalar.type), scalar).result
        return mapping[value]
    for op in block.operations:
        if op.operation.name == "linalg.yield":
            return vec(op.operands[0])
        results = [ir.VectorType.get([LANES], r.type) for r in op.results]
        if op.operation.name == "arith.constant":
            scalar = op.operation.clone().results[0]
            made = vector.BroadcastOp(results[0], scalar)
        else:
            attributes = {name: op.attributes[name] for name in op.attributes}
            made = ir.Operation.create(op.operation.name, results=results,
                                       operands=[vec(v) for v in op.operands], attributes=attributes)
        for before, after in zip(op.results, made.results):
            mapping[before] = after
    raise ValueError("an epilogue body without linalg.yield")
