"""Profile mode (`compile(..., profile=True)`): where a call's time goes, by kind of op.

On buffers, before the ops become loops, every top-level op of a public function that does real work
is bracketed by two reads of the OpenMP runtime's wall clock (`omp_get_wtime`, the library the
parallel code links anyway), and the difference is added atomically to its slot of a module global
(site 0 of each function is the whole call). PROFILE_SITES_ATTR lists each slot's (function, kind, label);
TAKE_FUNCTION(slot) returns a slot's seconds and resets it. What no site covers (allocations, views,
the calls' own overhead) is the call's glue: its total less the sites.
"""
from __future__ import annotations

import json

from mlir import ir
from mlir.dialects import arith, func, memref

from ...ir.attributes import DISPATCH_ATTR, EPILOGUE_ATTR, OUTLINED_ATTR, PROFILE_SITES_ATTR, ROW_CHAIN_ATTR
from ...ir.diagnostics import format_location
from ...ir.match import iterator_kinds
from ...ir.walk import functions, public_functions, walk

PROFILE_GLOBAL = "ftuner_profile_seconds"
TAKE_FUNCTION = "ftuner_take_profile"
CLOCK = "omp_get_wtime"

COPIES = ("linalg.copy", "linalg.transpose", "linalg.broadcast", "memref.copy")
_ARITHMETIC = ("arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.maximumf", "arith.minimumf",
               "arith.maxnumf", "arith.minnumf", "arith.negf", "arith.cmpf")


def _generic_kind(op) -> str:
    if "reduction" in iterator_kinds(op):
        return "reduction"
    body = op.regions[0].blocks[0].operations
    if any(o.operation.name in _ARITHMETIC or o.operation.name.startswith("math.") for o in body):
        return "elementwise"
    return "copy/layout"          # broadcasts, gathers, permutes: data moved, nothing computed


def _ops_in(regions):
    for region in regions:
        for block in region.blocks:
            for child in block.operations:
                yield child
                yield from walk(child)


def _nested(op):
    """The ops inside `op`; for an scf.if the else branch first: a parallel generic's serial version,
    the op as written (its then branch holds the tiled loops)."""
    regions = list(op.regions)
    if op.operation.name == "scf.if":
        regions.reverse()
    return _ops_in(regions)


def _written_ops(op):
    """The ops of an scf.if's else branch (the ops as written), or of any other op's regions."""
    return _ops_in([op.regions[1]] if op.operation.name == "scf.if" else op.regions)


def kind_of(op, dispatches: dict[str, str], kernels: dict | None = None) -> tuple[str, str] | None:
    """(kind, label) of a top-level op worth timing, or None (views, sizes, allocations: glue).
    `dispatches`: the dispatch functions' labels by name; `kernels`: the outlined row kernels'
    (row_kernels.py) ops by function name, timed as the op they run."""
    name = op.operation.name
    if name == "func.call":
        callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        if kernels and callee in kernels:
            return kind_of(kernels[callee], dispatches)
        return ("uKernels", dispatches[callee]) if callee in dispatches else ("call", f"@{callee}")
    if name == "linalg.generic":
        return _generic_kind(op), name
    if name in COPIES:
        return "copy/layout", name
    if name == "linalg.fill":
        return "fill", name
    if name.startswith("linalg."):
        return "other linalg", name
    if name in ("scf.if", "scf.forall", "scf.for", "scf.parallel"):
        chain = [inner for inner in _written_ops(op) if ROW_CHAIN_ATTR in inner.attributes]
        if chain:       # row_chains.py's group (its first op may be bufferization's copy of an init)
            return "reduction", f"row chain of {len(chain)} ops in {name}"
        for inner in _ops_in(op.regions):   # a dispatch versioned on a test (head_views.py): its dispatch
            if inner.operation.name == "func.call" and \
                    ir.FlatSymbolRefAttr(inner.attributes["callee"]).value in dispatches:
                return "uKernels", f"{kind_of(inner, dispatches)[1]} in {name}"
        for inner in _nested(op):       # a parallel generic or copy: the kind of the op it runs
            found = kind_of(inner, dispatches)
            if found is not None:
                return found[0], f"{found[1]} in {name}"
        return "loop", name
    return None


def instrument(module_op) -> None:
    """Bracket the timed sites of every public function; add the global, the clock and TAKE_FUNCTION."""
    dispatches = {fn.attributes["sym_name"].value: f"{ir.StringAttr(fn.attributes[DISPATCH_ATTR]).value} dispatch"
                  + (" + epilogue" if EPILOGUE_ATTR in fn.attributes else "")
                  for fn in functions(module_op) if DISPATCH_ATTR in fn.attributes}
    kernels = {fn.attributes["sym_name"].value: _kernel_op(fn) for fn in functions(module_op)
               if OUTLINED_ATTR in fn.attributes and fn.regions[0].blocks}
    plan = []                            # (function, its ops worth timing with their (kind, label))
    for fn in public_functions(module_op):
        body = list(fn.regions[0].blocks[0].operations)
        timed = [(op, found) for op in body[:-1] if (found := kind_of(op, dispatches, kernels)) is not None]
        plan.append((fn, body, timed))
    count = sum(1 + len(timed) for _, _, timed in plan)
    if not count:
        return
    f64 = ir.F64Type.get()
    counters = ir.MemRefType.get([count], f64)
    _declare(module_op, counters)
    sites: list[tuple[str, str, str]] = []
    for fn, body, timed in plan:
        name = fn.attributes["sym_name"].value
        with ir.InsertionPoint(body[0]), fn.location:
            start = _clock()
        total = len(sites)
        sites.append((name, "total", "the whole call"))
        for op, (kind, label) in timed:
            following = body[body.index(op) + 1]        # every timed op has one: the terminator at least
            with ir.InsertionPoint(op), op.location:
                before = _clock()
            with ir.InsertionPoint(following), op.location:
                _accumulate(counters, before, len(sites))
            sites.append((name, kind, f"{label} at {format_location(str(op.location))}"))
        with ir.InsertionPoint(body[-1]), fn.location:
            _accumulate(counters, start, total)
    module_op.attributes[PROFILE_SITES_ATTR] = ir.StringAttr.get(json.dumps(sites))


def _kernel_op(fn):
    """The op an outlined row kernel runs: its body's one op with regions."""
    return next(op for op in fn.regions[0].blocks[0].operations if len(op.regions))


def _clock() -> ir.Value:
    return func.CallOp([ir.F64Type.get()], CLOCK, []).result


def _accumulate(counters: ir.MemRefType, start: ir.Value, slot: int) -> None:
    """The clock again, the seconds since `start` added to `slot` (atomically: calls may be concurrent)."""
    seconds = arith.SubFOp(_clock(), start).result
    memref.AtomicRMWOp(arith.AtomicRMWKind.addf, seconds, memref.GetGlobalOp(counters, PROFILE_GLOBAL).result,
                       [arith.ConstantOp(ir.IndexType.get(), slot).result])


def _declare(module_op, counters: ir.MemRefType) -> None:
    """The zeroed global, the clock's declaration, and TAKE_FUNCTION(slot) -> seconds (slot reset)."""
    f64, index = counters.element_type, ir.IndexType.get()
    zeros = ir.DenseElementsAttr.get_splat(ir.RankedTensorType.get(counters.shape, f64), ir.FloatAttr.get(f64, 0.0))
    with ir.InsertionPoint.at_block_begin(module_op.regions[0].blocks[0]), module_op.location:
        memref.GlobalOp(PROFILE_GLOBAL, ir.TypeAttr.get(counters), sym_visibility="private", initial_value=zeros)
        func.FuncOp(CLOCK, ir.FunctionType.get([], [f64]), visibility="private")
        take = func.FuncOp(TAKE_FUNCTION, ir.FunctionType.get([index], [f64]))
        with ir.InsertionPoint(take.add_entry_block()):
            seconds = memref.GetGlobalOp(counters, PROFILE_GLOBAL).result
            value = memref.LoadOp(seconds, [take.arguments[0]]).result
            memref.StoreOp(arith.ConstantOp(f64, 0.0).result, seconds, [take.arguments[0]])
            func.ReturnOp([value])


def sites(module_op) -> list[tuple[str, str, str]]:
    """(function, kind, label) per slot, in slot order (empty when the module is not instrumented)."""
    if PROFILE_SITES_ATTR not in module_op.attributes:
        return []
    return [tuple(site) for site in json.loads(ir.StringAttr(module_op.attributes[PROFILE_SITES_ATTR]).value)]
