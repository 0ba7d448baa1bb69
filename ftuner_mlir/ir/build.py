"""Small builder helpers the IR-emitting layers share (at the caller's insertion point and location)."""
from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, func, linalg, scf, tensor, vector

from ..families import family
from .match import affine_maps
from .walk import defining_op

DYNAMIC = ir.ShapedType.get_dynamic_size()


def index(value: int) -> ir.Value:
    """An `arith.constant` of index type."""
    return arith.ConstantOp(ir.IndexType.get(), value).result


def dim(value: ir.Value, axis: int | ir.Value) -> ir.Value:
    """`tensor.dim` of a ranked tensor; `axis` an int or an index value already built."""
    return tensor.DimOp(value, index(axis) if isinstance(axis, int) else axis).result


def cmp(predicate: arith.CmpIPredicate, a: ir.Value, b: ir.Value) -> ir.Value:
    """`arith.cmpi` of two integer or index values."""
    return arith.CmpIOp(predicate, a, b).result


def float_constant(element: ir.Type, value: float = 0.0) -> ir.Value:
    """An `arith.constant` of float type `element`."""
    return arith.ConstantOp(element, ir.FloatAttr.get(element, value)).result


def zero_vector(vector_type: ir.VectorType) -> ir.Value:
    """An `arith.constant` of float vector type `vector_type`, all zeros."""
    return arith.ConstantOp(vector_type, ir.DenseElementsAttr.get_splat(
        vector_type, ir.FloatAttr.get(vector_type.element_type, 0.0))).result


def loop_extent(op, loop: int) -> ir.Value:
    """The extent of a linalg op's loop `loop`, read from the first operand its indexing map reads with
    that plain dim (a constant when that dim of the operand is static)."""
    for operand, amap in zip(op.operands, affine_maps(op)):
        for position, expr in enumerate(amap.results):
            if isinstance(expr, ir.AffineDimExpr) and expr.position == loop:
                size = ir.ShapedType(operand.type).shape[position]
                return index(size) if size >= 0 else dim(operand, position)
    raise ValueError(f"no operand of {op.operation.name} is indexed by loop d{loop}")


def cast(value: ir.Value, to: ir.Type) -> ir.Value:
    """`value` as type `to` (a `tensor.cast` when the types differ)."""
    return value if value.type == to else tensor.CastOp(to, value).result


def reassociation(groups) -> ir.ArrayAttr:
    """The reassociation attribute of collapse_shape / expand_shape: groups of dims."""
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in g]) for g in groups])


def reassociation_groups(op) -> list[list[int]]:
    """The groups of dims of a collapse_shape / expand_shape (the inverse of `reassociation`)."""
    return [[int(ir.IntegerAttr(d).value) for d in g] for g in op.attributes["reassociation"]]


def collapse_shape(value: ir.Value, groups, shape=None) -> ir.Value:
    """`value` with each group of dims merged into one: the result's `shape` (ints, DYNAMIC); by default
    each group's product, DYNAMIC where a dim of the group is."""
    source = ir.RankedTensorType(value.type)
    if shape is None:
        shape = [DYNAMIC if any(source.shape[i] == DYNAMIC for i in g) else math.prod(source.shape[i] for i in g)
                 for g in groups]
    return tensor.CollapseShapeOp(ir.RankedTensorType.get(shape, source.element_type), value,
                                  reassociation(groups)).result


def expand_shape(value: ir.Value, groups, sizes: list) -> ir.Value:
    """`value` with each dim split into its group of `sizes` (ints or index values)."""
    static = [s if isinstance(s, int) else DYNAMIC for s in sizes]
    element = ir.RankedTensorType(value.type).element_type
    return tensor.ExpandShapeOp(ir.RankedTensorType.get(static, element), value, reassociation(groups),
                                [s for s in sizes if not isinstance(s, int)], ir.DenseI64ArrayAttr.get(static)).result


def family_matmul(a: ir.Value, b: ir.Value, acc: ir.Value, family_name: str) -> ir.Value:
    """A `linalg.matmul` (`linalg.batch_matmul` for a batched family) with the indexing maps of matmul
    family `family_name` (*_transpose_b: B read as N x K)."""
    fam = family(family_name)
    maps = [ir.AffineMapAttr(ir.Attribute.parse(f"affine_map<{m}>")).value for m in fam.affine_maps()]
    build = linalg.batch_matmul if fam.batched else linalg.matmul
    return build(a, b, outs=[acc], indexing_maps=maps)


def element_type(dtype: str) -> ir.Type:
    """The MLIR type of an element type name ("f32", "f64")."""
    return ir.Type.parse(dtype)


def tensor_type(shape, element: ir.Type) -> ir.RankedTensorType:
    """A ranked tensor type; `None` in `shape` is a dynamic dim."""
    return ir.RankedTensorType.get([DYNAMIC if s is None else s for s in shape], element)


def _static_and_dynamic(values) -> tuple[list[int], list[ir.Value]]:
    """Mixed ints and index values as an op's static array (DYNAMIC where a value goes) and the values."""
    static = [v if isinstance(v, int) else DYNAMIC for v in values]
    return static, [v for v in values if not isinstance(v, int)]


def _slice_operands(offsets, sizes, strides):
    strides = [1] * len(offsets) if strides is None else strides
    (so, do), (ss, ds), (st, dt) = (_static_and_dynamic(x) for x in (offsets, sizes, strides))
    return do, ds, dt, ir.DenseI64ArrayAttr.get(so), ir.DenseI64ArrayAttr.get(ss), ir.DenseI64ArrayAttr.get(st)


def _vector_access(source: ir.Value):
    """The permutation map and in_bounds of a one-vector access along `source`'s last dim."""
    rank = ir.ShapedType(source.type).rank
    return (ir.AffineMapAttr.get(ir.AffineMap.get_minor_identity(rank, 1)),
            ir.ArrayAttr.get([ir.BoolAttr.get(True)]))


def read_vector(vec: ir.VectorType, source: ir.Value, indices, pad: ir.Value, mask: ir.Value | None = None) -> ir.Value:
    """One vector from `source` at `indices` along its last dim (lanes off `mask` are not read)."""
    permutation, in_bounds = _vector_access(source)
    return vector.TransferReadOp(vec, source, list(indices), permutation, pad, in_bounds, mask=mask).result


def write_vector(value: ir.Value, dest: ir.Value, indices, mask: ir.Value | None = None) -> ir.Value:
    """`dest` with vector `value` written at `indices` along its last dim (lanes off `mask` untouched)."""
    permutation, in_bounds = _vector_access(dest)
    return vector.TransferWriteOp(dest.type, value, dest, list(indices), permutation, in_bounds, mask=mask).result


def extract_slice(source: ir.Value, offsets, sizes, result: ir.Type, strides=None) -> ir.Value:
    """`tensor.extract_slice` with offsets/sizes/strides given as ints (static) or index values; `result`
    is the slice's type (rank-reduced where it drops unit dims)."""
    return tensor.ExtractSliceOp(result, source, *_slice_operands(offsets, sizes, strides)).result


def insert_slice(source: ir.Value, dest: ir.Value, offsets, sizes, strides=None) -> ir.Value:
    """`tensor.insert_slice` of `source` into `dest` (offsets/sizes/strides as in `extract_slice`)."""
    return tensor.InsertSliceOp(source, dest, *_slice_operands(offsets, sizes, strides)).result


def parallel_insert_slice(source: ir.Value, dest: ir.Value, offsets, sizes, strides=None) -> None:
    """`tensor.parallel_insert_slice` (inside an `scf.forall.in_parallel`)."""
    tensor.ParallelInsertSliceOp(source, dest, *_slice_operands(offsets, sizes, strides))


def for_loop(lower, upper, step, inits, body) -> list[ir.Value]:
    """`scf.for` over [lower, upper) by `step` carrying `inits`; `body(iv, carried)` builds one iteration
    and returns the values it yields. Returns the loop's results."""
    loop = scf.ForOp(lower, upper, step, inits)
    with ir.InsertionPoint(loop.body):
        scf.YieldOp(list(body(loop.induction_variable, list(loop.inner_iter_args))))
    return list(loop.results)


def if_else(condition: ir.Value, types, then, otherwise) -> list[ir.Value]:
    """`scf.if` with results of `types`: `then()` and `otherwise()` build their branch and return the
    values it yields."""
    branch = scf.IfOp(condition, list(types), has_else=True)
    for block, build in ((branch.then_block, then), (branch.else_block, otherwise)):
        with ir.InsertionPoint(block):
            scf.YieldOp(list(build()))
    return list(branch.results)


def private_function(name: str, inputs, results, attributes: dict, body):
    """A private `func.func @name` at the insertion point, with `attributes` (name -> attribute);
    `body(*arguments)` builds its ops and returns the values it returns."""
    fn = func.FuncOp(name, (list(inputs), list(results)), visibility="private")
    for key, value in attributes.items():
        fn.attributes[key] = value
    with ir.InsertionPoint(fn.add_entry_block()):
        func.ReturnOp(list(body(*fn.arguments)))
    return fn


def widen(value: ir.Value, element: ir.Type) -> ir.Value:
    """A tensor of floats as a new tensor of the wider float type `element` (a parallel `arith.extf`)."""
    return _convert(value, element, lambda to, x: arith.ExtFOp(to, x).result)


def narrow_to_bf16(value: ir.Value) -> ir.Value:
    """A tensor of fp32 as a new tensor of bf16, rounded to nearest even (NaNs stay NaN), in integer
    ops: LLVM turns an fptrunc to bfloat into a call of `__truncsfbf2` per element, which libgcc 12
    lacks."""
    return _convert(value, ir.BF16Type.get(), _f32_to_bf16)


def _f32_to_bf16(element: ir.Type, x: ir.Value) -> ir.Value:
    i32, i16 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(16)
    c = lambda v: arith.ConstantOp(i32, v).result   # noqa: E731
    bits = arith.BitcastOp(i32, x).result
    high = arith.ShRUIOp(bits, c(16)).result
    odd = arith.AndIOp(high, c(1)).result
    rounded = arith.ShRUIOp(arith.AddIOp(arith.AddIOp(bits, c(0x7FFF)).result, odd).result, c(16)).result
    quiet_nan = arith.OrIOp(high, c(0x40)).result
    is_nan = arith.CmpFOp(arith.CmpFPredicate.UNO, x, x).result
    chosen = arith.SelectOp(is_nan, quiet_nan, rounded).result
    return arith.BitcastOp(element, arith.TruncIOp(i16, chosen).result).result


def with_element(t: ir.Type, element: ir.Type) -> ir.RankedTensorType:
    """Ranked tensor type `t` with elements of `element`."""
    return ir.RankedTensorType.get(ir.RankedTensorType(t).shape, element)


def empty_like(value: ir.Value, element: ir.Type) -> ir.Value:
    """A tensor.empty of `element` with `value`'s shape (its dynamic sizes read from `value`)."""
    return tensor.EmptyOp(sizes(value), element).result


def sizes(value: ir.Value) -> list:
    """Each dim of a ranked tensor: its size, or a tensor.dim where it is dynamic."""
    shape = ir.RankedTensorType(value.type).shape
    return [s if s != DYNAMIC else dim(value, d) for d, s in enumerate(shape)]


def view_on(op, source: ir.Value) -> ir.Value:
    """View `op` (tensor.cast, expand_shape, collapse_shape, reshape) made again on `source`, whose
    element type may differ from what `op` read: the same attributes and size operands."""
    result = with_element(op.results[0].type, ir.RankedTensorType(source.type).element_type)
    attributes = {name: op.attributes[name] for name in op.attributes}
    return ir.Operation.create(op.name, results=[result], operands=[source] + list(op.operands)[1:],
                               attributes=attributes).results[0]


def _convert(value: ir.Value, element: ir.Type, convert) -> ir.Value:
    """`value` with `convert(element, x)` applied to every element, as a parallel linalg.generic. Its
    sizes are read from the init of the generic that makes `value`, when one does: a tensor.dim of
    `value` itself would be a second use, and elementwise fusion fuses only a producer used once
    (softmax's probabilities were rounded in a pass of their own)."""
    t = ir.RankedTensorType(value.type)
    owner = defining_op(value)
    shaped = owner.operands[-1] if owner is not None and owner.name == "linalg.generic" and len(owner.results) == 1 \
        and owner.operands[-1].type == value.type else value
    empty = empty_like(shaped, element)
    identity = ir.AffineMapAttr.get(ir.AffineMap.get_identity(t.rank))
    op = linalg.GenericOp([ir.RankedTensorType.get(t.shape, element)], [value], [empty],
                          ir.ArrayAttr.get([identity, identity]),
                          ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * t.rank))
    block = op.regions[0].blocks.append(t.element_type, element)
    with ir.InsertionPoint(block):
        linalg.YieldOp([convert(element, block.arguments[0])])
    return op.result
