"""What a public function expects and returns, with the shape rules its ops imply.

A small symbolic pass over the function body (before any lowering) gives every tensor dimension a
symbol. Function arguments' dims are the roots; `tensor.dim` and `tensor.empty` carry symbols along;
a linalg op's indexing maps say which operand dims share a loop and so must be equal; index arithmetic
(arith ops on index or integer sizes, as torch-mlir computes a convolution's output size) and tensor.pad
derive new sizes; a map with a window (`oh * 2 + kh`) must stay inside its operand. At call time the
runtime checks every equality (a mismatch is a ValueError naming the argument, raised before native
code runs, which would otherwise read out of bounds) and evaluates each result dim to allocate outputs.
"""
from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
from mlir import ir
from mlir.dialects.linalg import get_indexing_maps

from ..ir.attributes import ATTR as UKERNELS_ATTR, UNCHECKED_REGIONS_ATTR
from ..ir.codecs import ukernel_set_from_attr
from ..ir.diagnostics import PassFailure, location_of
from ..ir.match import classify_conv
from ..ir.build import reassociation_groups
from ..ir.walk import public_functions, walk
from ..ukernel.space import UKernelSet

DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64, "i8": np.int8,
          "i16": np.int16, "f16": np.float16, "bf16": ml_dtypes.bfloat16}
# linalg ops without an indexing_maps attribute whose operands all share one identity map
_ELEMENTWISE = {"linalg.add", "linalg.sub", "linalg.mul", "linalg.div", "linalg.max", "linalg.min",
                "linalg.exp", "linalg.log", "linalg.abs", "linalg.negf", "linalg.copy", "linalg.sqrt",
                "linalg.tanh", "linalg.floor", "linalg.ceil", "linalg.reciprocal", "linalg.square",
                "linalg.rsqrt", "linalg.powf", "linalg.erf", "linalg.elementwise", "linalg.softmax"}


class _Symbols:
    """Union-find over dimension symbols; a class may also be pinned to a static size."""

    def __init__(self):
        self.parent: list[int] = []
        self.static: dict[int, int] = {}
        self.why: dict[int, str] = {}          # root -> op that tied the class together
        self.derived: list[tuple[int, str, tuple[int, ...], str]] = []   # (class, op, operands, why)

    def new(self, static: int | None = None) -> int:
        self.parent.append(len(self.parent))
        s = len(self.parent) - 1
        if static is not None:
            self.static[s] = static
        return s

    def find(self, s: int) -> int:
        while self.parent[s] != s:
            self.parent[s] = self.parent[self.parent[s]]
            s = self.parent[s]
        return s

    def union(self, a: int, b: int, why: str, where: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        sa, sb = self.static.get(ra), self.static.get(rb)
        if sa is not None and sb is not None and sa != sb:
            raise PassFailure(where, f"dimension sizes {sa} and {sb} must be equal ({why})")
        self.parent[rb] = ra
        if sb is not None:
            self.static[ra] = sb
        self.why[ra] = self.why.get(ra) or self.why.get(rb) or why


@dataclasses.dataclass(frozen=True)
class ArgSpec:
    dtype: np.dtype
    shape: tuple[int | None, ...]          # None = dynamic


@dataclasses.dataclass(frozen=True)
class Signature:
    """Arguments, results, and for every dimension the equality class it belongs to."""

    name: str
    args: tuple[ArgSpec, ...]
    results: tuple[ArgSpec, ...]
    arg_dims: tuple[tuple[int, ...], ...]       # class id of each arg dim
    result_dims: tuple[tuple[int, ...], ...]    # class id of each result dim
    class_static: dict                          # class id -> static size
    class_reason: dict                          # class id -> the op that requires the equality
    tiled_ops: tuple = ()                       # (UKernelSet, loop dim class ids) per tiled op
    bounds: tuple = ()                          # slices that must stay inside their tensor (shape_rules)
    allocations: tuple = ()                     # (dim classes, element bytes) of each tensor.empty
    derived: tuple = ()                         # (class, op, operands, why, is a tensor dim): computed sizes
    asserts: tuple = ()                         # the module's cf.assert messages (lowering/llvm/asserts.py)

    def rules(self) -> dict:
        """The JSON-friendly form runtime/shape_rules.py checks calls against."""
        spec = lambda s: {"dtype": s.dtype.name, "shape": list(s.shape)}   # noqa: E731
        return {"name": self.name, "args": [spec(a) for a in self.args], "results": [spec(r) for r in self.results],
                "arg_dims": [list(d) for d in self.arg_dims], "result_dims": [list(d) for d in self.result_dims],
                "class_static": dict(self.class_static), "class_reason": dict(self.class_reason),
                "bounds": [dict(b) for b in self.bounds],
                "allocations": [[list(dims), size] for dims, size in self.allocations],
                "derived": [list(d) for d in self.derived], "asserts": list(self.asserts)}


def _element(t) -> str:
    return str(t.element_type)


def _element_bits(element: ir.Type) -> int:
    text = str(element)
    digits = "".join(ch for ch in text if ch.isdigit())
    return int(digits) if digits else 64


def _spec(t, what: str, where: str) -> ArgSpec:
    if not isinstance(t, ir.RankedTensorType):
        raise PassFailure(where, f"{what} has type {t}; only ranked tensors are supported at the boundary")
    if _element(t) not in DTYPES:
        raise PassFailure(where, f"{what} has element type {_element(t)}; supported: {sorted(DTYPES)}")
    return ArgSpec(np.dtype(DTYPES[_element(t)]), tuple(None if d < 0 else d for d in t.shape))


def _operand_terms(op) -> list[list[tuple[dict[int, int], int] | None]] | None:
    """For each operand dim: ({loop: coefficient}, constant) when it is a sum of loops (None: not)."""
    if "indexing_maps" in op.attributes:
        maps = [m.value for m in op.attributes["indexing_maps"]]
        return [[_affine_terms(r) for r in m.results] for m in maps]
    conv = classify_conv(op)
    if conv is not None:
        return [[(terms, 0) for terms in dims] for dims in conv[0].operand_terms(conv[1], conv[2])]
    maps = get_indexing_maps(op.operation)          # any other structured op: reduce, broadcast, map, pooling
    if maps is not None:
        return [[_affine_terms(r) for r in m.value.results] for m in maps]
    return None


def _has_tensor_operand(op) -> bool:
    return any(isinstance(v.type, ir.RankedTensorType) for v in op.operands)


def _plain_loop(terms) -> int | None:
    """The loop of an operand dim indexed by one loop alone (`d2`); None for a window or a constant."""
    if terms is None or terms[1] != 0 or list(terms[0].values()) != [1]:
        return None
    return next(iter(terms[0]))


def _operand_maps(op, terms) -> list[list[int | None]] | None:
    """For each operand, the loop index of each of its dims (None = not a plain loop dim); `terms` are
    the op's _operand_terms."""
    name = op.operation.name
    if terms is not None:
        return [[_plain_loop(t) for t in dims] for dims in terms]
    ranks = [v.type.rank if isinstance(v.type, ir.ShapedType) else 0 for v in op.operands]
    if name in _ELEMENTWISE:
        return [list(range(r)) for r in ranks]
    if name == "linalg.fill":
        return [[], list(range(ranks[1]))]
    if name == "linalg.transpose":
        perm = list(op.attributes["permutation"])
        return [list(range(ranks[0])), perm]
    return None


# arith ops on sizes -> the shape rules' operator (runtime/shape_rules.py OPS)
_INDEX_ARITH = {"arith.addi": "add", "arith.subi": "sub", "arith.muli": "mul", "arith.floordivsi": "floordiv",
                "arith.ceildivsi": "ceildiv", "arith.divsi": "div", "arith.divui": "div", "arith.remsi": "rem",
                "arith.maxsi": "max", "arith.minsi": "min", "arith.maxui": "max", "arith.minui": "min"}
# arith.cmpi's predicate attribute (its enum order) -> the shape rules' comparison
_CMPI_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
_INDEX_CASTS = {"arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui", "arith.trunci"}


def _affine_terms(expr) -> tuple[dict[int, int], int] | None:
    """`expr` as {loop: coefficient} plus a constant, when it is a sum of loops times constants."""
    if isinstance(expr, ir.AffineDimExpr):
        return {expr.position: 1}, 0
    if isinstance(expr, ir.AffineConstantExpr):
        return {}, expr.value
    if isinstance(expr, ir.AffineAddExpr):
        lhs, rhs = _affine_terms(expr.lhs), _affine_terms(expr.rhs)
        if lhs is None or rhs is None:
            return None
        terms = dict(lhs[0])
        for loop, coeff in rhs[0].items():
            terms[loop] = terms.get(loop, 0) + coeff
        return terms, lhs[1] + rhs[1]
    if isinstance(expr, ir.AffineMulExpr):
        for dim, const in ((expr.lhs, expr.rhs), (expr.rhs, expr.lhs)):
            if isinstance(const, ir.AffineConstantExpr):
                inner = _affine_terms(dim)
                if inner is not None:
                    return {loop: c * const.value for loop, c in inner[0].items()}, inner[1] * const.value
    return None


class _Analysis:
    def __init__(self, fn):
        self.fn = fn
        self.sym = _Symbols()
        self.dims: dict[ir.Value, list[int]] = {}
        self.index: dict[ir.Value, int] = {}        # index-typed value -> class
        self.consts: dict[ir.Value, int] = {}
        self.tiled: list[tuple[UKernelSet, tuple[int, ...]]] = []   # uKernel set, loop dim symbols
        self.bounds: list[dict] = []       # per slice dim: offset + (size - 1) * stride < the tensor's dim
        self.allocations: list[tuple[list[int], int]] = []
        self.elements: dict[ir.Value, list[int | None]] = {}   # tensor.from_elements of sizes (a shape)

    def tensor_dims(self, value) -> list[int]:
        if value not in self.dims:
            t = value.type
            self.dims[value] = [self.sym.new(None if d < 0 else d) for d in t.shape] \
                if isinstance(t, ir.RankedTensorType) else []
        return self.dims[value]

    def empty_dim(self, size: int, dynamic_sizes) -> int:
        if size >= 0:
            return self.sym.new(size)
        value = next(dynamic_sizes)
        return self.index[value] if value in self.index else self.sym.new()

    def derive(self, op: str, *operands: int, why: str) -> int:
        """A new class whose size the body computes as `op(*operands)`."""
        cls = self.sym.new()
        self.sym.derived.append((cls, op, operands, why))
        return cls

    def visit_scalar(self, op, name: str, where: str) -> bool:
        """Integer arithmetic on sizes (torch-mlir clamps a slice's end with cmpi/select/min/max): the
        result becomes a derived class. False when `op` is not such an op or an operand is unknown."""
        if not all(v in self.index for v in op.operands):
            return False
        operands = [self.index[v] for v in op.operands]
        why = f"the {name} at {where}"
        if name in _INDEX_CASTS:
            self.index[op.results[0]] = operands[0]
        elif name in _INDEX_ARITH:
            self.index[op.results[0]] = self.derive(_INDEX_ARITH[name], *operands, why=why)
        elif name == "arith.cmpi":
            predicate = _CMPI_PREDICATES[ir.IntegerAttr(op.attributes["predicate"]).value]
            self.index[op.results[0]] = self.derive(predicate, *operands, why=why)
        elif name == "arith.select":
            self.index[op.results[0]] = self.derive("select", *operands, why=why)
        else:
            return False
        return True

    def visit(self, op) -> None:
        name, where = op.operation.name, location_of(op)
        if name == "arith.constant" and isinstance(op.results[0].type, (ir.IndexType, ir.IntegerType)) \
                and isinstance(op.attributes["value"], ir.IntegerAttr):
            value = ir.IntegerAttr(op.attributes["value"]).value
            if str(op.results[0].type) == "i1":
                value = int(value != 0)          # `true` reads back as -1
            self.consts[op.results[0]] = value
            self.index[op.results[0]] = self.sym.new(value)
        elif name.startswith("arith.") and self.visit_scalar(op, name, where):
            pass
        elif name == "affine.apply":
            self.visit_affine_apply(op, where)
        elif name == "tensor.from_elements":
            self.elements[op.results[0]] = [self.index.get(v) for v in op.operands]
        elif name in ("tensor.collapse_shape", "tensor.expand_shape", "tensor.reshape"):
            self.visit_reshape(op, name, where)
        elif name == "tensor.pad":
            self.visit_pad(op, where)
        elif name == "tensor.dim" and op.operands[1] in self.consts:
            self.index[op.results[0]] = self.tensor_dims(op.operands[0])[self.consts[op.operands[1]]]
        elif name == "tensor.empty":
            dyn = iter(op.operands)
            self.dims[op.results[0]] = [self.empty_dim(d, dyn) for d in op.results[0].type.shape]
            element = ir.RankedTensorType(op.results[0].type).element_type
            self.allocations.append((self.dims[op.results[0]], max(1, _element_bits(element) // 8)))
        elif name in ("tensor.extract_slice", "tensor.insert_slice"):
            self.visit_slice(op, name, where)
        elif name in ("tensor.extract", "tensor.insert"):
            self.visit_element(op, name, where)
        elif name == "tensor.cast":
            for a, b in zip(self.tensor_dims(op.operands[0]), self.tensor_dims(op.results[0])):
                self.sym.union(a, b, "tensor.cast", where)
        elif name.startswith("linalg."):
            self.visit_linalg(op, where)
        elif name in ("scf.forall", "scf.for") and op.results:
            # loop results have the shapes of the tensors they thread (shared_outs / iter_args)
            inits = list(op.operands)[len(op.operands) - len(op.results):]
            for result, init in zip(op.results, inits):
                self.dims[result] = self.tensor_dims(init)

    def _operand(self, static: int, dynamic, what: str, where: str, op_name: str):
        """('const', n) or ('class', symbol) for a slice offset or size; anything else cannot be checked."""
        if static != ir.ShapedType.get_dynamic_size():
            return ("const", static)
        value = next(dynamic)
        if value in self.index:
            return ("class", self.index[value])
        raise PassFailure(where, f"cannot check that {op_name} stays inside its tensor: its {what} is neither "
                                 f"a constant nor a dim of an argument")

    def visit_slice(self, op, op_name: str, where: str) -> None:
        """A slice's every dim must lie inside the big tensor (the source of extract_slice, the destination
        of insert_slice): recorded as bounds checked at call time. The slice's dims are its sizes."""
        big = op.operands[0] if op_name == "tensor.extract_slice" else op.operands[1]
        small_type = ir.RankedTensorType((op.results[0] if op_name == "tensor.extract_slice" else op.operands[0]).type)
        big_dims = self.tensor_dims(big)
        if small_type.rank != len(big_dims):
            raise PassFailure(where, f"rank-reducing {op_name} is not supported by the shape checks")
        offsets, sizes = iter(op.offsets), iter(op.sizes)
        strides = list(op.attributes["static_strides"])
        if ir.ShapedType.get_dynamic_stride_or_offset() in strides or ir.ShapedType.get_dynamic_size() in strides:
            raise PassFailure(where, f"cannot check that {op_name} stays inside its tensor: dynamic strides")
        slice_dims = []
        for d, (o, sz, st) in enumerate(zip(op.attributes["static_offsets"], op.attributes["static_sizes"], strides)):
            offset = self._operand(o, offsets, "offset", where, op_name)
            size = self._operand(sz, sizes, "size", where, op_name)
            self.bounds.append({"tensor": big_dims[d], "offset": offset, "size": size, "stride": st,
                                "why": f"{op_name} at {where}"})
            slice_dims.append(size[1] if size[0] == "class" else self.sym.new(size[1]))
        if op_name == "tensor.extract_slice":
            self.dims[op.results[0]] = slice_dims
        else:
            for a, b in zip(self.tensor_dims(op.operands[0]), slice_dims):
                self.sym.union(a, b, op_name, where)
            self.dims[op.results[0]] = big_dims

    def visit_element(self, op, op_name: str, where: str) -> None:
        """tensor.extract / tensor.insert of one element: each index must lie inside its dim, recorded as a
        bound of size 1 checked at call time; an index the rules cannot evaluate is refused."""
        tensor = op.operands[0] if op_name == "tensor.extract" else op.operands[1]
        indices = list(op.operands)[1:] if op_name == "tensor.extract" else list(op.operands)[2:]
        dims = self.tensor_dims(tensor)
        for d, index in zip(dims, indices):
            if index in self.consts:
                offset = ("const", self.consts[index])
            elif index in self.index:
                offset = ("class", self.index[index])
            else:
                raise PassFailure(where, f"cannot check that {op_name} stays inside its tensor: its index is "
                                         f"neither a constant nor computed from the arguments' dims")
            self.bounds.append({"tensor": d, "offset": offset, "size": ("const", 1), "stride": 1,
                                "why": f"{op_name} at {where}"})
        if op_name == "tensor.insert":
            self.dims[op.results[0]] = dims

    def visit_affine_apply(self, op, where: str) -> None:
        """An affine map of sizes (torch-mlir: `s0 * 2` for a collapsed batch): evaluated term by term."""
        if not all(v in self.index for v in op.operands):
            return
        amap = op.attributes["map"].value
        operands = [self.index[v] for v in op.operands]
        why = f"the affine.apply at {where}"
        combine = {ir.AffineAddExpr: "add", ir.AffineMulExpr: "mul", ir.AffineModExpr: "mod",
                   ir.AffineFloorDivExpr: "floordiv", ir.AffineCeilDivExpr: "ceildiv"}

        def term(expr) -> int:
            if isinstance(expr, ir.AffineDimExpr):
                return operands[expr.position]
            if isinstance(expr, ir.AffineSymbolExpr):
                return operands[amap.n_dims + expr.position]
            if isinstance(expr, ir.AffineConstantExpr):
                return self.sym.new(expr.value)
            kind = next(k for k in combine if isinstance(expr, k))
            return self.derive(combine[kind], term(expr.lhs), term(expr.rhs), why=why)

        self.index[op.results[0]] = term(amap.results[0])

    def product(self, dims: list[int], why: str) -> int:
        out = dims[0] if dims else self.sym.new(1)
        for d in dims[1:]:
            out = self.derive("mul", out, d, why=why)
        return out

    def visit_reshape(self, op, name: str, where: str) -> None:
        """collapse_shape: each result dim is the product of its group. expand_shape: the result dims
        are its output_shape, and each group's product must be the source dim. tensor.reshape to a shape
        built by tensor.from_elements: those sizes, whose product must be the source's element count."""
        why = f"the {name} at {where}"
        source = self.tensor_dims(op.operands[0])
        if name == "tensor.collapse_shape":
            self.dims[op.results[0]] = [self.product([source[i] for i in g], why) for g in reassociation_groups(op)]
            return
        if name == "tensor.expand_shape":
            dynamic = iter(op.operands[1:])
            dims = [self.empty_dim(size, dynamic) for size in op.attributes["static_output_shape"]]
            for src, group in zip(source, reassociation_groups(op)):
                self.sym.union(src, self.product([dims[i] for i in group], why), why, where)
        else:
            shape = self.elements.get(op.operands[1])
            out_type = ir.RankedTensorType(op.results[0].type)
            dims = [self.sym.new(d) if d >= 0 else (shape[i] if shape and shape[i] is not None else self.sym.new())
                    for i, d in enumerate(out_type.shape)]
            self.sym.union(self.product(source, why), self.product(dims, why), why, where)
        self.dims[op.results[0]] = dims

    def visit_pad(self, op, where: str) -> None:
        """Each padded dim is the source dim plus its low and high padding."""
        lows, highs = iter(op.low), iter(op.high)
        dims = []
        for src, lo, hi in zip(self.tensor_dims(op.operands[0]), op.attributes["static_low"],
                               op.attributes["static_high"]):
            lo = self._operand(lo, lows, "low padding", where, "tensor.pad")
            hi = self._operand(hi, highs, "high padding", where, "tensor.pad")
            pads = [self.sym.new(v) if kind == "const" else v for kind, v in (lo, hi)]
            why = f"the tensor.pad at {where}"
            dims.append(self.derive("add", self.derive("add", src, pads[0], why=why), pads[1], why=why))
        self.dims[op.results[0]] = dims

    def window_bounds(self, op, operand_terms, loops: dict[int, int], where: str) -> None:
        """An operand dim indexed by a sum of loops (a convolution's `oh * stride + kh * dilation`) must
        stay inside the operand: recorded as a bound with the one loop of dynamic extent as its size."""
        if operand_terms is None:          # elementwise, fill, transpose: plain loops only
            return
        static = lambda c: self.sym.static.get(self.sym.find(c))   # noqa: E731
        for operand, dims_terms in zip(op.operands, operand_terms):
            for dim, terms in zip(self.tensor_dims(operand), dims_terms):
                if _plain_loop(terms) is not None:
                    continue
                expr = " + ".join(f"d{loop} * {c}" for loop, c in terms[0].items()) if terms else "non-affine"
                if terms is None or min(list(terms[0].values()) + [terms[1]]) < 0 or not terms[0].keys() <= loops.keys():
                    raise PassFailure(where, f"cannot check that {op.operation.name} stays inside its operands: "
                                             f"indexing expression {expr}")
                dynamic = [loop for loop in terms[0] if static(loops[loop]) is None]
                if len(dynamic) > 1:
                    raise PassFailure(where, f"cannot check that {op.operation.name} stays inside its operands: "
                                             f"{expr} combines several loops of dynamic extent")
                offset = terms[1] + sum(c * (static(loops[loop]) - 1) for loop, c in terms[0].items() if loop not in dynamic)
                size = ("class", loops[dynamic[0]]) if dynamic else ("const", 1)
                stride = terms[0][dynamic[0]] if dynamic else 1
                self.bounds.append({"tensor": dim, "offset": ("const", offset), "size": size, "stride": stride,
                                    "why": f"{op.operation.name} at {where}"})

    def visit_linalg(self, op, where: str) -> None:
        terms = _operand_terms(op)
        maps = _operand_maps(op, terms)
        inits = list(op.operands)[len(op.operands) - len(op.results):] if op.results else []
        if (maps is None or len(maps) != len(op.operands)) and _has_tensor_operand(op):
            raise PassFailure(where, f"cannot check the shapes of '{op.operation.name}': its operands' dims have "
                                     f"no indexing maps the shape rules know; express it as a linalg.generic")
        if maps is not None and len(maps) == len(op.operands):
            loops: dict[int, int] = {}
            for operand, dims_map in zip(op.operands, maps):
                for sym, loop in zip(self.tensor_dims(operand), dims_map):
                    if loop is None:
                        continue
                    if loop in loops:
                        self.sym.union(loops[loop], sym, f"operands of {op.operation.name}", where)
                    else:
                        loops[loop] = sym
            self.window_bounds(op, terms, loops, where)
            if UKERNELS_ATTR in op.attributes and len(loops) == len(maps[-1]) + 1:
                uks = ukernel_set_from_attr(op.attributes[UKERNELS_ATTR])
                self.tiled.append((uks, tuple(loops[i] for i in range(len(loops)))))
        for result, init in zip(op.results, inits):
            self.dims[result] = self.tensor_dims(init)


def analyze(module_op) -> dict[str, Signature]:
    """Signatures of the public functions (call before lowering: it reads the tensor-level IR)."""
    out = {}
    for fn in public_functions(module_op):
        out[fn.attributes["sym_name"].value] = _analyze_function(fn)
    return out


def _single_block(fn, name: str, where: str) -> None:
    blocks = len(list(fn.regions[0].blocks))
    if blocks != 1:
        raise PassFailure(where, f"public function @{name} has {blocks} blocks; only single-block bodies "
                                 f"(structured control flow: scf.for, scf.if) are supported")


# Ops that index a tensor: inside a region the analysis does not follow, they would reach native code
# with unchecked sizes. A function whose author vouches for its regions' indexing (the benchmark's peak
# kernels: loops bounded by the dims of the tensors they index) says so with this unit attribute.
_INDEXING_PREFIXES = ("linalg.", "tensor.", "memref.", "bufferization.", "vector.")


def _refuse_unchecked_nesting(op) -> None:
    """A structured-control-flow op (scf.for, scf.if, ...) whose regions hold tensor-indexing ops is
    refused: the shape rules read the function's top-level ops only. Regions of scalar code pass."""
    if not op.operation.name.startswith("scf.") or not op.regions:
        return
    for inner in walk(op):
        if inner.operation.name.startswith(_INDEXING_PREFIXES):
            raise PassFailure(location_of(inner), f"'{inner.operation.name}' inside '{op.operation.name}' is not "
                                                  f"shape-checked (the checks read a public function's top-level "
                                                  f"ops): move it out of the region, or vouch for the function's "
                                                  f"regions with {{{UNCHECKED_REGIONS_ATTR}}}")


def _analyze_function(fn) -> Signature:
    where = location_of(fn)
    name = fn.attributes["sym_name"].value
    _single_block(fn, name, where)
    block = fn.regions[0].blocks[0]
    a = _Analysis(fn)
    args = tuple(_spec(arg.type, f"argument #{i} of @{name}", where) for i, arg in enumerate(block.arguments))
    for arg in block.arguments:
        a.tensor_dims(arg)
    ret = None
    vouched = UNCHECKED_REGIONS_ATTR in fn.attributes
    for op in block.operations:
        if not vouched:
            _refuse_unchecked_nesting(op)
        a.visit(op)
        if op.operation.name == "func.return":
            ret = op
    results = tuple(_spec(v.type, f"result #{i} of @{name}", where) for i, v in enumerate(ret.operands))
    find = a.sym.find
    arg_dims = tuple(tuple(find(s) for s in a.tensor_dims(arg)) for arg in block.arguments)
    result_dims = tuple(tuple(find(s) for s in a.tensor_dims(v)) for v in ret.operands)
    known = {c for dims in arg_dims for c in dims}
    static = {find(s): v for s, v in a.sym.static.items()}
    derived = []
    tensor_dims = {find(c) for dims in a.dims.values() for c in dims}
    for cls, op, operands, why in a.sym.derived:      # creation order: operands come first
        cls, operands = find(cls), [find(c) for c in operands]
        if all(c in known or c in static for c in operands):
            derived.append((cls, op, operands, why, cls in tensor_dims))
            known.add(cls)
    for i, dims in enumerate(result_dims):
        for d, c in enumerate(dims):
            if c not in known and c not in static:
                raise PassFailure(where, f"cannot tell the size of dim {d} of result #{i} of @{name} from the "
                                         f"arguments; make it static or derive it with tensor.dim of an argument")
    reasons = {find(r): why for r, why in a.sym.why.items()}
    tiled = tuple((uks, tuple(find(s) for s in loops)) for uks, loops in a.tiled)
    resolve = lambda v: (v[0], find(v[1])) if v[0] == "class" else v   # noqa: E731
    bounds = []
    for b in a.bounds:
        bound = dict(b, tensor=find(b["tensor"]), offset=resolve(b["offset"]), size=resolve(b["size"]))
        used = [bound["tensor"]] + [v[1] for v in (bound["offset"], bound["size"]) if v[0] == "class"]
        if any(c not in known and c not in static for c in used):
            raise PassFailure(where, f"cannot check the bounds of the {b['why']}: a size involved does not "
                                     f"follow from the arguments")
        bounds.append(bound)
    allocations = tuple((tuple(find(s) for s in dims), size) for dims, size in a.allocations
                        if all(find(s) in known or find(s) in static for s in dims))
    return Signature(name, args, results, arg_dims, result_dims, static, reasons, tiled, tuple(bounds), allocations,
                     tuple(derived))
