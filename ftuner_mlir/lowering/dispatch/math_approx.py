"""f32 `math.exp`, `math.erf` and `math.tanh` as polynomials in arith ops; `math.fpowi` by a constant
as multiplications; f32 division by a constant as multiplication by its reciprocal.

Lowered as they come, these ops are scalar libm calls (`expf`, `erff`, `tanhf`), and a call in a loop
body stops LLVM's loop vectorizer: GELU and softmax ran one element at a time (measured on one BERT
layer: erff alone was 7% of the call). As arithmetic, the loops around them vectorize like any
elementwise loop. The approximations are the classic ones (Cephes' expf; the rational erf and tanh
of Eigen and XLA) over the whole f32 range: exp within 2 ulps, erf and tanh within 4e-7 of the true
value (about 3 ulps of 1). test/runtime/test_math_approx.py checks them against float64 on a dense grid
and fresh random points, and the edges (+-inf, NaN, underflow, overflow).

`math.fpowi` lowers to `llvm.intr.powi`, whose exponent stays a scalar integer: a vectorized loop
cannot take it (GPT-2's tanh GELU computes x^3 so, and its loop could not join the matmul's
epilogue). A constant exponent n is what LLVM's own powi expansion computes: square-and-multiply,
and 1 / x^|n| for n < 0.
"""
from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith
from mlir.dialects import math as math_d

from ...ir.build import float_constant
from ...ir.walk import defining_op, integer_constant, walk

LOG2E = 1.44269504088896341
LN2_HI, LN2_LO = 0.693359375, -2.12194440e-4            # ln 2 = hi + lo; n * hi is exact in f32
EXP_POLY = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1,
            5.0000001201e-1)                              # Cephes expf, highest degree first
# Beyond EXP_MAX: +inf. Below EXP_MIN = -126 ln 2 (the f32 just above it) the result would be subnormal:
# it is 0 instead (off by less than the smallest normal), and the clamp keeps every intermediate normal.
# Subnormal arithmetic takes a microcode assist per operation: softmax over a causal mask (half its
# inputs -inf) ran 3x slower while the clamp let 2^n reach the subnormals.
EXP_MAX, EXP_MIN = 88.72283935546875, -87.33654022216797

ERF_CLAMP = 4.0                                           # erf(4) rounds to 1 in f32
ERF_NUM = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05,
           -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02)
ERF_DEN = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03,
           -1.42647390514189e-02)

TANH_CLAMP = 7.90531110763549805                          # beyond: +-1 (2.4e-7 off at most)
TANH_TINY = 0.0004                                        # below: tanh(x) = x in f32
TANH_NUM = (-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11, 5.12229709037114e-08,
            1.48572235717979e-05, 6.37261928875436e-04, 4.89352455891786e-03)
TANH_DEN = (1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03, 4.89352518554385e-03)


class _F32:
    """arith on f32 scalars at the current insertion point."""

    def __init__(self):
        self.t = ir.F32Type.get()

    def c(self, value: float) -> ir.Value:
        return arith.ConstantOp(self.t, value).result

    def add(self, x, y):
        return arith.AddFOp(x, y).result

    def mul(self, x, y):
        return arith.MulFOp(x, y).result

    def div(self, x, y):
        return arith.DivFOp(x, y).result

    def fma(self, x, y, z):
        return math_d.FmaOp(x, y, z).result

    def clamp(self, x, lo: float, hi: float):
        """maximumf/minimumf: NaN stays NaN."""
        return arith.MinimumFOp(arith.MaximumFOp(x, self.c(lo)).result, self.c(hi)).result

    def horner(self, x, coefficients) -> ir.Value:
        acc = self.c(coefficients[0])
        for coefficient in coefficients[1:]:
            acc = self.fma(acc, x, self.c(coefficient))
        return acc

    def select_if(self, predicate: str, x, bound: float, then, otherwise):
        cond = arith.CmpFOp(getattr(arith.CmpFPredicate, predicate), x, self.c(bound)).result
        return arith.SelectOp(cond, then, otherwise).result


def _power_of_two(f: _F32, n: ir.Value) -> ir.Value:
    """2^n for an i32 n in [-126, 127]: n + 127 in the exponent bits."""
    i32 = n.type
    biased = arith.AddIOp(n, arith.ConstantOp(i32, 127).result).result
    return arith.BitcastOp(f.t, arith.ShLIOp(biased, arith.ConstantOp(i32, 23).result).result).result


def exp(f: _F32, x: ir.Value) -> ir.Value:
    """e^x = 2^n * e^r, n = round(x log2 e), |r| <= ln2 / 2, e^r by a degree-7 polynomial."""
    clamped = f.clamp(x, EXP_MIN, EXP_MAX)
    n = math_d.FloorOp(f.fma(clamped, f.c(LOG2E), f.c(0.5))).result
    r = f.fma(n, f.c(-LN2_LO), f.fma(n, f.c(-LN2_HI), clamped))
    r2 = f.mul(r, r)
    er = f.add(f.fma(f.horner(r, EXP_POLY), r2, r), f.c(1.0))
    # 2^n as 2^h * 2^(n-h), h = n/2: both factors normal floats for every n in [-150, 128]
    i32 = ir.IntegerType.get_signless(32)
    n_int = arith.FPToSIOp(i32, n).result
    half = arith.ShRSIOp(n_int, arith.ConstantOp(i32, 1).result).result
    value = f.mul(f.mul(er, _power_of_two(f, half)), _power_of_two(f, arith.SubIOp(n_int, half).result))
    value = f.select_if("OGT", x, EXP_MAX, f.c(math.inf), value)
    return f.select_if("OLT", x, EXP_MIN, f.c(0.0), value)


def erf(f: _F32, x: ir.Value) -> ir.Value:
    """x P(x^2) / Q(x^2) on [-4, 4]."""
    clamped = f.clamp(x, -ERF_CLAMP, ERF_CLAMP)
    x2 = f.mul(clamped, clamped)
    return f.div(f.mul(clamped, f.horner(x2, ERF_NUM)), f.horner(x2, ERF_DEN))


def tanh(f: _F32, x: ir.Value) -> ir.Value:
    """x P(x^2) / Q(x^2) on [-7.9, 7.9], +-1 beyond; x itself where |x| is tiny (keeps the relative
    error)."""
    clamped = f.clamp(x, -TANH_CLAMP, TANH_CLAMP)
    x2 = f.mul(clamped, clamped)
    value = f.div(f.mul(clamped, f.horner(x2, TANH_NUM)), f.horner(x2, TANH_DEN))
    magnitude = math_d.AbsFOp(x).result
    value = f.select_if("OGT", magnitude, TANH_CLAMP, math_d.CopySignOp(f.c(1.0), x).result, value)
    return f.select_if("OLT", magnitude, TANH_TINY, x, value)


APPROXIMATIONS = {"math.exp": exp, "math.erf": erf, "math.tanh": tanh}
F32_MIN_NORMAL, F32_MAX = 2.0 ** -126, 3.4028234663852886e38
MAX_EXPANDED_POWER = 16          # |n| beyond: the powi call stays (at most 8 multiplications below)


def power(x: ir.Value, n: int) -> ir.Value:
    """x^n by square-and-multiply in x's own float type; 1 / x^-n for n < 0."""
    result, square, k = None, x, abs(n)
    while k:
        if k & 1:
            result = square if result is None else arith.MulFOp(result, square).result
        k >>= 1
        if k:
            square = arith.MulFOp(square, square).result
    if result is not None and n > 0:
        return result
    one = arith.ConstantOp(x.type, 1.0).result
    return one if result is None else arith.DivFOp(one, result).result


def expand_constant_powers(module_op) -> None:
    """Every scalar `math.fpowi` by a constant exponent as multiplications."""
    for op in [op for op in walk(module_op) if op.operation.name == "math.fpowi"]:
        n = integer_constant(op.operands[1])
        if n is None or abs(n) > MAX_EXPANDED_POWER or not isinstance(op.operands[0].type, ir.FloatType):
            continue
        with ir.InsertionPoint(op), op.location:
            value = power(op.operands[0], n)
        op.results[0].replace_all_uses_with(value)
        op.operation.erase()


def _f32_constant(value) -> float | None:
    """The float an f32 `arith.constant` scalar defines `value` as, else None."""
    owner = defining_op(value)
    if owner is None or owner.name != "arith.constant" or not isinstance(owner.attributes["value"], ir.FloatAttr):
        return None
    return ir.FloatAttr(owner.attributes["value"]).value if value.type == ir.F32Type.get() else None


def _normal_f32(x: float) -> bool:
    return math.isfinite(x) and F32_MIN_NORMAL <= abs(x) <= F32_MAX


def multiply_by_reciprocals(module_op) -> None:
    """Every scalar f32 division by a constant c as a multiplication by 1 / c (rounded to f32), where both
    are normal numbers: a vector division costs about ten multiplications (GELU's x / sqrt(2) on
    every element of FFN1's output). The result may differ from x / c in the last bit, as ATen's own
    GELU does (it multiplies by M_SQRT1_2)."""
    for op in [op for op in walk(module_op) if op.operation.name == "arith.divf"]:
        c = _f32_constant(op.operands[1])
        if c is None or not _normal_f32(c) or not _normal_f32(1.0 / c):
            continue
        with ir.InsertionPoint(op), op.location:
            product = arith.MulFOp(op.operands[0], float_constant(op.operands[1].type, 1.0 / c))
            if "fastmath" in op.attributes:
                product.attributes["fastmath"] = op.attributes["fastmath"]
        op.results[0].replace_all_uses_with(product.result)
        op.operation.erase()


def approximate_math(module_op) -> None:
    """Replace every scalar f32 exp / erf / tanh of the module by its polynomial, every fpowi by a
    constant by multiplications, and every f32 division by a constant by a multiplication."""
    expand_constant_powers(module_op)
    multiply_by_reciprocals(module_op)
    f32 = ir.F32Type.get(module_op.context)
    for op in [op for op in walk(module_op) if op.operation.name in APPROXIMATIONS]:
        if op.results[0].type != f32:
            continue                    # f64 and vectors keep their libm / LLVM lowering
        with ir.InsertionPoint(op), op.location:
            value = APPROXIMATIONS[op.operation.name](_F32(), op.operands[0])
        op.results[0].replace_all_uses_with(value)
        op.operation.erase()
