"""linalg.generics that read only constants (GPT-2's iota over its static batch, say; a batch norm's
1 / sqrt(var + eps) per channel) are evaluated at compile time, with numpy, into a constant: their value
is the same on every call. Only what is evaluated exactly is folded: static parallel generics of at most
FOLD_MAX_ELEMENTS elements whose body uses the integer and float ops below (IEEE-exact in numpy as in
the generated code: + - * / and sqrt are correctly rounded); anything else stays code. A `cf.assert`
whose condition holds for every element is dropped with its generic; one that fails stays, to fail at
run time with its message.

Left unfolded, torch-mlir's batch norm (its reciprocal square root guarded by an assert that the root is
not zero) was fused per channel into the 4-D elementwise loop, which the assert kept scalar, and left
assert-only copies of it over the whole tensor: ResNet-50's batch norms took a third of its time."""
from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith

from ...ir.match import affine_maps
from ...ir.resources import ELEMENT_DTYPES, blob_constant, constant_array
from ...ir.walk import public_functions

FOLD_MAX_ELEMENTS = 1 << 16      # larger constants would grow the module more than the work costs

BINARY = {"arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply, "arith.addf": np.add,
          "arith.subf": np.subtract, "arith.mulf": np.multiply, "arith.divf": np.divide,
          "arith.maxsi": np.maximum, "arith.minsi": np.minimum}
CASTS = frozenset({"arith.index_cast", "arith.sitofp", "arith.extsi", "arith.trunci", "arith.extf", "arith.truncf"})
SIGNED_COMPARISONS = {"eq": np.equal, "ne": np.not_equal, "slt": np.less, "sle": np.less_equal,
                      "sgt": np.greater, "sge": np.greater_equal}
UNARY = {"math.sqrt": np.sqrt, "arith.negf": np.negative, "math.absf": np.abs}
# arith.cmpf: the ordered predicates are false where an operand is NaN, the unordered ones true
FLOAT_COMPARISONS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
                     "ge": np.greater_equal}


class _NotFoldable(Exception):
    pass


def _dtype(t: ir.Type):
    if isinstance(t, ir.IndexType):
        return np.int64
    if str(t) == "i1":
        return np.bool_
    dtype = ELEMENT_DTYPES.get(str(t))
    if dtype is None:
        raise _NotFoldable(str(t))
    return dtype


def _scalar_constant(value: ir.Value):
    owner = value.owner
    if not isinstance(owner, ir.OpView) or owner.operation.name != "arith.constant":
        raise _NotFoldable("a value from outside that is not a constant")
    attr = owner.attributes["value"]
    if isinstance(attr, (ir.IntegerAttr, ir.FloatAttr)):
        return np.array(attr.value, _dtype(value.type))
    raise _NotFoldable("a non-scalar constant captured")


def _evaluate(op) -> np.ndarray:
    """The value of generic `op` (one result), computed over its whole iteration space."""
    result = ir.RankedTensorType(op.results[0].type)
    maps = affine_maps(op)
    if (len(op.results) != 1 or not result.has_static_shape or result.rank == 0
            or int(np.prod(result.shape)) > FOLD_MAX_ELEMENTS
            or any("parallel" not in str(it) for it in op.attributes["iterator_types"])
            or maps[-1] != ir.AffineMap.get_identity(result.rank)):
        raise _NotFoldable("not a small static parallel generic")
    grid = np.indices(result.shape)
    block = op.regions[0].blocks[0]
    values = {}
    for arg, operand, amap in zip(block.arguments, op.operands, maps):
        array = constant_array(operand)
        if array is None:
            if list(arg.uses):
                raise _NotFoldable("an input that is not a constant")
            continue
        index = []
        for expr in amap.results:
            if isinstance(expr, ir.AffineDimExpr):
                index.append(grid[expr.position])
            elif isinstance(expr, ir.AffineConstantExpr) and expr.value == 0:
                index.append(0)
            else:
                raise _NotFoldable("an indexing map beyond dims and 0")
        values[arg] = array[tuple(index)] if index else array
    for inner in block.operations:
        name = inner.operation.name
        if name == "linalg.yield":
            return np.broadcast_to(_read(values, inner.operands[0]), result.shape).astype(_dtype(result.element_type))
        args = [_read(values, v) for v in inner.operands]
        if name == "linalg.index":
            out = grid[ir.IntegerAttr(inner.attributes["dim"]).value]
        elif name == "arith.constant":
            out = _scalar_constant(inner.results[0])
        elif name in BINARY:
            out = BINARY[name](*args)
        elif name in CASTS:
            out = args[0].astype(_dtype(inner.results[0].type))
        elif name == "arith.cmpi":
            predicate = arith.CmpIPredicate(ir.IntegerAttr(inner.attributes["predicate"]).value).name
            if predicate not in SIGNED_COMPARISONS:
                raise _NotFoldable("an unsigned comparison")
            out = SIGNED_COMPARISONS[predicate](*args)
        elif name == "arith.select":
            out = np.where(*args)
        elif name in UNARY:
            out = UNARY[name](args[0])
        elif name == "arith.cmpf":
            out = _compare_floats(inner, *args)
        elif name == "cf.assert":
            if not np.all(args[0]):
                raise _NotFoldable("an assert that fails on these constants")
            continue
        else:
            raise _NotFoldable(name)
        values[inner.results[0]] = np.asarray(out, _dtype(inner.results[0].type))
    raise _NotFoldable("no linalg.yield")


def _compare_floats(op, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    predicate = arith.CmpFPredicate(ir.IntegerAttr(op.attributes["predicate"]).value).name.lower()
    unordered = np.isnan(a) | np.isnan(b)
    if predicate in ("ord", "uno"):
        return ~unordered if predicate == "ord" else unordered
    if predicate[1:] not in FLOAT_COMPARISONS or predicate[0] not in "ou":
        raise _NotFoldable(f"arith.cmpf {predicate}")
    holds = FLOAT_COMPARISONS[predicate[1:]](a, b)
    return holds & ~unordered if predicate[0] == "o" else holds | unordered


def _read(values: dict, value: ir.Value) -> np.ndarray:
    return values[value] if value in values else _scalar_constant(value)


def fold_constant_generics(module_op) -> None:
    """Replace each top-level linalg.generic of the public functions that reads only constants by the
    constant it computes (i1 results stay code: their storage differs from numpy's bools)."""
    for fn in public_functions(module_op):
        for op in list(fn.regions[0].blocks[0].operations):
            if op.operation.name != "linalg.generic" or not op.results:
                continue
            element = ir.RankedTensorType(op.results[0].type).element_type
            if str(element) == "i1":
                continue
            try:
                with np.errstate(all="ignore"):        # IEEE results (inf, nan) as the code would give
                    value = _evaluate(op)
            except _NotFoldable:
                continue
            with ir.InsertionPoint(op), op.location:
                folded = blob_constant(value, "ftuner_folded", element)
            op.results[0].replace_all_uses_with(folded)
            op.operation.erase()
