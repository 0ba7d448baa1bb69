"""A row tile (a generic on [1, ..., 1, K], cut by parallel_generics.py or placed by row_chains.py) as
explicit vector code: `lanes` elements a step, the rest of the row under a mask.

Left to LLVM's loop vectorizer, a row of dynamic length ran its vector loop 64 elements a step (16
lanes, interleaved 4 times) and the rest, up to 63 elements, one at a time: at T = 119 almost half of
a softmax row's exp ran as scalar code (a [16, 12, 119, 119] softmax: 4.6 ms, five passes of memory
traffic would take 1.5), and LLVM does not vectorize a `maximumf` reduction at all (the row max
ran at a quarter of the row sum's speed). Here:

  elementwise  for k in steps of lanes: out[k:k+lanes] = body(in[k:k+lanes]); then once under the mask
               of the last K % lanes elements (lanes past the row are neither read nor written);
  reduction    a body whose yield folds one value into its one output with addf, mulf, maximumf,
               minimumf, maxnumf or minnumf: ACCUMULATORS vectors of partial results, starting at the
               combiner's neutral element, the masked rest's off lanes replaced by it, then one
               vector.reduction and the output's initial value. Maxima and minima are exact in any order; sums and products
               are reassociated (within float tolerance, as row_reductions.py's scalar loops).

The body's ops that depend on a value read along the row become the same ops on vectors (arith and
math ops); ops that do not (a mask element picked by the row's index, constants, a per-row mean) are
computed once before the loop and broadcast; a division by such a value (a softmax's row sum) is a
multiplication by its reciprocal. A boolean mask read along the row (an attention mask's
select) is read as vectors of i1 (bytes in memory: narrow_types.py). A gather along a table's row (an embedding lookup:
`tensor.extract` at indices fixed for the row and the row's index last) is one vector read of that
row. Any other body (another use of the index along the row, a gather across rows) is left as it was.
"""
from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, scf, tensor, vector

from ...ir.build import float_constant, index, loop_extent, read_vector, write_vector
from ...ir.match import affine_maps, iterator_kinds, reads_output
from ...ir.walk import defining_op, integer_constant

REASSOC = "#arith.fastmath<reassoc>"
REASSOCIABLE = ("arith.addf", "arith.mulf")
# combining op -> (vector.reduction kind, neutral element)
COMBINERS = {"arith.addf": ("add", -0.0), "arith.mulf": ("mul", 1.0),
             "arith.maximumf": ("maximumf", -math.inf), "arith.minimumf": ("minimumf", math.inf),
             "arith.maxnumf": ("maxnumf", -math.inf), "arith.minnumf": ("minnumf", math.inf)}
_RECIPROCAL = "reciprocal"      # hoisted[_RECIPROCAL, division's result]: its divisor's reciprocal
ACCUMULATORS = 4        # partial vectors in flight: a vector maximumf is several instructions long
_VECTOR_DIALECTS = ("arith.", "math.")
_SCALAR_ONLY = {"math.fpowi", "math.ipowi"}     # an integer exponent that LLVM takes as a scalar only


def indices(amap: ir.AffineMap, k: ir.Value | None, last: int) -> list[ir.Value]:
    """The indices `amap` reads a row tile's operand at, position k along the row (0 elsewhere)."""
    out = []
    for expr in amap.results:
        if isinstance(expr, ir.AffineDimExpr):
            out.append(k if expr.position == last else index(0))
        else:
            out.append(index(expr.value))
    return out


def _attributes(op) -> dict:
    return {name: op.attributes[name] for name in op.attributes}


def _vector_of(scalar: ir.Type, lanes: int) -> ir.VectorType:
    return ir.VectorType.get([lanes], scalar)


class _RowBody:
    """A row tile's body split into the ops that vary along the row and those that do not."""

    def __init__(self, op, skip=None):
        self.op, self.skip = op, skip
        self.maps, self.last = affine_maps(op), len(iterator_kinds(op)) - 1
        self.inputs = len(op.operands) - len(op.results)
        self.block = op.regions[0].blocks[0]
        self.along = [any(isinstance(e, ir.AffineDimExpr) and e.position == self.last for e in amap.results)
                      for amap in self.maps[:self.inputs]]
        self.extent = _static_row_extent(op, self.maps, self.last)
        self.ok = self._classify()

    def _skipped(self, inner) -> bool:
        return self.skip is not None and inner.operation == self.skip

    def _classify(self) -> bool:
        for amap, along in zip(self.maps[:self.inputs], self.along):
            if along and amap.results[-1] != ir.AffineExpr.get_dim(self.last):
                return False            # read along the row, but not along its last dim
        for operand, along in zip(list(self.op.operands)[:self.inputs], self.along):
            element = ir.RankedTensorType(operand.type).element_type
            if along and not (isinstance(element, ir.FloatType) or _is_i1(element)):
                return False            # floats, and i1 masks (read as bytes later: narrow_types.py)
        arguments = list(self.block.arguments)
        self.varying = {a for a, along in zip(arguments, self.along) if along}
        self.position = None            # linalg.index of the row dim, read only as a gather's last index
        self.index_chain = set()        # the position and its clamps that change nothing: read as k
        self.gathers = set()            # tensor.extract results reading a table's row: one vector read
        for inner in list(self.block.operations)[:-1]:
            if self._skipped(inner):
                continue
            if len(inner.regions):
                return False
            name = inner.operation.name
            if name == "linalg.index" and ir.IntegerAttr(inner.attributes["dim"]).value == self.last:
                if self.position is not None:
                    return False
                self.position = inner.results[0]        # read only by the gathers and their clamps (below)
                self._add(self.index_chain, inner.results[0])
                continue
            if name in ("arith.maxsi", "arith.minsi") and inner.operands[0] in self.index_chain and \
                    _unclamped(inner.results[0], self.extent) == self.position:
                self._add(self.index_chain, inner.results[0])
                continue
            if name == "tensor.extract" and self.position is not None and inner.operands[-1] in self.varying:
                if not _gathers_along(inner, self.index_chain, self.varying, self.extent):
                    return False
                self._add(self.gathers, inner.results[0])
                continue
            if any(v in self.varying for v in inner.operands):
                if not name.startswith(_VECTOR_DIALECTS) or name in _SCALAR_ONLY or len(inner.results) != 1:
                    return False
                self.varying.add(inner.results[0])
        return self.position is None or self._position_only_gathered()

    def _add(self, kind: set, value: ir.Value) -> None:
        kind.add(value)
        self.varying.add(value)

    def _position_only_gathered(self) -> bool:
        """The row index and its clamps are read by nothing but those clamps and the gathers (as their
        last index)."""
        for value in self.index_chain:
            for use in value.uses:
                owner = use.owner
                made = owner.results[0] if owner.results else None
                if made in self.gathers and use.operand_number == len(owner.operands) - 1:
                    continue
                if made not in self.index_chain:
                    return False
        return True

    def hoist(self) -> dict:
        """The invariant part, built at the insertion point: block argument / body value -> scalar."""
        mapping = {}
        for argument, operand, amap, along in zip(self.block.arguments, self.op.operands, self.maps, self.along):
            if not along:
                mapping[argument] = tensor.ExtractOp(operand, indices(amap, None, self.last)).result
        for inner in list(self.block.operations)[:-1]:
            if self._divides_by_invariant(inner):
                mapping[_RECIPROCAL, inner.results[0]] = _reciprocal(
                    mapping.get(inner.operands[1], inner.operands[1]), inner.operation)
                continue
            if self._skipped(inner) or (inner.results and inner.results[0] in self.varying):
                continue
            if inner.operation.name == "linalg.index":      # a loop of extent 1 in a row tile
                mapping[inner.results[0]] = index(0)
                continue
            clone = inner.operation.clone()
            for i, value in enumerate(clone.operands):
                clone.operands[i] = mapping.get(value, value)
            if inner.results:                               # an assert on the row's index is checked once
                mapping[inner.results[0]] = clone.results[0]
        return mapping

    def _divides_by_invariant(self, inner) -> bool:
        """A division of a value that varies along the row by one that does not (a softmax's row sum)."""
        return (not self._skipped(inner) and inner.operation.name == "arith.divf" and
                inner.results[0] in self.varying and inner.operands[1] not in self.varying)

    def vectorized(self, hoisted: dict, k: ir.Value, mask, lanes: int, carried=None):
        """The varying part on `lanes` elements from row position k (under `mask`); returns the vector
        of any body value (an invariant one broadcast). An input that is the output tensor itself is
        read from `carried` (the loop's current value of it), so the loop updates it in place instead
        of writing a copy."""
        mapping = {}
        out = self.op.operands[self.inputs]
        for argument, operand, amap, along in zip(self.block.arguments, self.op.operands, self.maps, self.along):
            if along:
                if carried is not None and operand == out and amap == self.maps[self.inputs]:
                    operand = carried
                element = ir.RankedTensorType(operand.type).element_type
                mapping[argument] = read_vector(_vector_of(element, lanes), operand,
                                                indices(amap, k, self.last), _zero(element), mask)

        def vec(value):
            if value not in mapping:
                scalar = hoisted.get(value, value)
                mapping[value] = vector.BroadcastOp(_vector_of(scalar.type, lanes), scalar).result
            return mapping[value]
        for inner in list(self.block.operations)[:-1]:
            if self._skipped(inner) or not inner.results or inner.results[0] not in self.varying:
                continue
            if inner.results[0] in self.index_chain:
                continue                                # the row index and its clamps: read as k
            if inner.results[0] in self.gathers:
                table, *at = inner.operands
                element = inner.results[0].type
                mapping[inner.results[0]] = read_vector(_vector_of(element, lanes), table,
                                                        [hoisted.get(v, v) for v in at[:-1]] + [k], _zero(element), mask)
                continue
            if self._divides_by_invariant(inner):
                reciprocal = vector.BroadcastOp(_vector_of(inner.results[0].type, lanes),
                                                hoisted[_RECIPROCAL, inner.results[0]]).result
                mapping[inner.results[0]] = ir.Operation.create(
                    "arith.mulf", results=[reciprocal.type], operands=[vec(inner.operands[0]), reciprocal],
                    attributes=_attributes(inner.operation)).results[0]
                continue
            made = ir.Operation.create(inner.operation.name, results=[_vector_of(inner.results[0].type, lanes)],
                                       operands=[vec(v) for v in inner.operands],
                                       attributes=_attributes(inner.operation))
            mapping[inner.results[0]] = made.results[0]
        return vec


def _reciprocal(divisor: ir.Value, division) -> ir.Value:
    """1 / divisor, once before the row's loop: the row is then multiplied by it (as ATen's softmax
    multiplies by 1 / sum; within an ulp of the division, for divisors above the smallest normal)."""
    one = float_constant(divisor.type, 1.0)
    return ir.Operation.create("arith.divf", results=[divisor.type], operands=[one, divisor],
                               attributes=_attributes(division)).results[0]


def _is_i1(t: ir.Type) -> bool:
    return isinstance(t, ir.IntegerType) and ir.IntegerType(t).width == 1


def _zero(element: ir.Type) -> ir.Value:
    """A read's padding: false for an i1 mask, 0.0 for floats."""
    attr = ir.IntegerAttr.get(element, 0) if _is_i1(element) else ir.FloatAttr.get(element, 0.0)
    return arith.ConstantOp(element, attr).result


def _static_row_extent(op, maps, last: int) -> int | None:
    """The row loop's extent where an operand's type has it static."""
    for operand, amap in zip(op.operands, maps):
        for size, expr in zip(ir.ShapedType(operand.type).shape, amap.results):
            if isinstance(expr, ir.AffineDimExpr) and expr.position == last and size >= 0:
                return size
    return None


def _unclamped(value: ir.Value, extent: int | None) -> ir.Value:
    """`value` past clamps (arith.maxsi with a constant <= 0, arith.minsi with one >= extent - 1) that
    leave every position of a row of static `extent` as it is (ftuner-clamp-extract-indices's)."""
    while extent is not None and (owner := defining_op(value)) is not None and owner.name in ("arith.maxsi", "arith.minsi"):
        bounds = [integer_constant(v) for v in owner.operands]
        if bounds[1] is None:
            return value
        keeps = bounds[1] <= 0 if owner.name == "arith.maxsi" else bounds[1] >= extent - 1
        if not keeps:
            return value
        value = owner.operands[0]
    return value


def _gathers_along(user, index_chain: set, varying: set, extent: int | None) -> bool:
    """`user` reads a float tensor whose last dim holds the row (at the row's position, perhaps through
    clamps that change nothing: `index_chain`) with its other indices fixed for the row: a contiguous
    row of the table, at least as long as the row (of static `extent`)."""
    if not isinstance(user.results[0].type, ir.FloatType):
        return False
    table, *at = user.operands
    if at[-1] not in index_chain or extent is None or ir.RankedTensorType(table.type).shape[-1] < extent:
        return False
    return all(v not in varying for v in [table] + at[:-1])


def row_tile_shape(op) -> bool:
    """Every loop but the last parallel and of extent 1 in every operand, read through plain dims or
    constants (a row tile; row_reductions.py's scalar rewrite takes the same)."""
    last = len(iterator_kinds(op)) - 1
    if any(kind != "parallel" for kind in iterator_kinds(op)[:-1]):
        return False
    for operand, amap in zip(op.operands, affine_maps(op)):
        for size, expr in zip(ir.ShapedType(operand.type).shape, amap.results):
            if not isinstance(expr, (ir.AffineDimExpr, ir.AffineConstantExpr)):
                return False        # a window (a convolution's d0 + d1)
            if isinstance(expr, ir.AffineDimExpr) and expr.position != last and size != 1:
                return False
    return True


def _combiner(op):
    """The op folding the body's one value into the output, when the output is read by it alone."""
    out_arg = op.regions[0].blocks[0].arguments[-1]
    uses = list(out_arg.uses)
    yielded = list(op.regions[0].blocks[0].operations)[-1].operands[0]
    if len(uses) != 1 or not isinstance(out_arg.type, ir.FloatType):
        return None
    combine = uses[0].owner
    if combine.name not in COMBINERS or combine.results[0] != yielded:
        return None
    return combine


def _fold_attributes(combine) -> dict:
    attributes = _attributes(combine)
    if combine.name in REASSOCIABLE:
        attributes["fastmath"] = ir.Attribute.parse(REASSOC)
    return attributes


def _steps(length: ir.Value, lanes: int) -> tuple[ir.Value, ir.Value]:
    """The row's whole vectors' end and the mask of the rest."""
    step = index(lanes)
    whole = arith.MulIOp(arith.DivUIOp(length, step).result, step).result
    rest = arith.SubIOp(length, whole).result
    mask = vector.CreateMaskOp(_vector_of(ir.IntegerType.get_signless(1), lanes), [rest]).result
    return whole, mask


def _elementwise(op, body: _RowBody, lanes: int) -> None:
    out, amap = op.operands[body.inputs], body.maps[body.inputs]
    yielded = list(body.block.operations)[-1].operands[0]
    with ir.InsertionPoint(op), op.location:
        hoisted = body.hoist()
        whole, mask = _steps(loop_extent(op, body.last), lanes)

        def step(k, dest, row_mask):
            value = body.vectorized(hoisted, k, row_mask, lanes, carried=dest)(yielded)
            return write_vector(value, dest, indices(amap, k, body.last), row_mask)
        loop = scf.ForOp(index(0), whole, index(lanes), [out])
        with ir.InsertionPoint(loop.body):
            scf.YieldOp([step(loop.induction_variable, loop.inner_iter_args[0], None)])
        result = step(whole, loop.results[0], mask)
    op.results[0].replace_all_uses_with(result)
    op.operation.erase()


def _reduction(op, body: _RowBody, combine, lanes: int) -> None:
    out, amap = op.operands[body.inputs], body.maps[body.inputs]
    element = body.block.arguments[-1].type
    vec_type = _vector_of(element, lanes)
    kind, neutral = COMBINERS[combine.name]
    folded = next(v for v in combine.operands if v != body.block.arguments[-1])
    with ir.InsertionPoint(op), op.location:
        start = tensor.ExtractOp(out, indices(amap, None, body.last)).result
        hoisted = body.hoist()
        whole, mask = _steps(loop_extent(op, body.last), lanes)
        identity = arith.ConstantOp(vec_type, ir.DenseElementsAttr.get_splat(
            vec_type, ir.FloatAttr.get(element, neutral))).result

        def fold(acc, part):
            return ir.Operation.create(combine.name, results=[acc.type], operands=[acc, part],
                                       attributes=_fold_attributes(combine)).results[0]

        def part(k, row_mask):
            return body.vectorized(hoisted, k, row_mask, lanes)(folded)
        wide = index(lanes * ACCUMULATORS)
        unrolled = arith.MulIOp(arith.DivUIOp(whole, wide).result, wide).result
        loop = scf.ForOp(index(0), unrolled, wide, [identity] * ACCUMULATORS)
        with ir.InsertionPoint(loop.body):
            at = [loop.induction_variable] + [arith.AddIOp(loop.induction_variable, index(i * lanes)).result
                                              for i in range(1, ACCUMULATORS)]
            scf.YieldOp([fold(acc, part(k, None)) for acc, k in zip(loop.inner_iter_args, at)])
        accs = list(loop.results)
        while len(accs) > 1:
            accs = [fold(accs[i], accs[i + 1]) for i in range(0, len(accs), 2)]
        loop = scf.ForOp(unrolled, whole, index(lanes), accs)
        with ir.InsertionPoint(loop.body):
            scf.YieldOp([fold(loop.inner_iter_args[0], part(loop.induction_variable, None))])
        acc = fold(loop.results[0], arith.SelectOp(mask, part(whole, mask), identity).result)
        total = vector.ReductionOp(element, ir.Attribute.parse(f"#vector.kind<{kind}>"), acc,
                                   fastmath=ir.Attribute.parse(REASSOC)).result
        value = ir.Operation.create(combine.name, results=[element], operands=[total, start],
                                    attributes=_fold_attributes(combine)).results[0]
        result = tensor.InsertOp(value, out, indices(amap, None, body.last)).result
    op.results[0].replace_all_uses_with(result)
    op.operation.erase()


def vectorize_row(op, vector_bits: int) -> bool:
    """Rewrite the row tile `op` as vector code when it qualifies (see above); whether it did."""
    if len(op.results) != 1 or not row_tile_shape(op):
        return False
    out_arg = op.regions[0].blocks[0].arguments[-1]
    if not isinstance(out_arg.type, ir.FloatType):
        return False
    lanes = vector_bits // out_arg.type.width
    if iterator_kinds(op)[-1] == "reduction":
        combine = _combiner(op)
        body = _RowBody(op, skip=combine.operation if combine is not None else None)
        if combine is None or not body.ok:
            return False
        _reduction(op, body, combine, lanes)
        return True
    body = _RowBody(op)
    if reads_output(op) or not body.ok:
        return False
    _elementwise(op, body, lanes)
    return True
