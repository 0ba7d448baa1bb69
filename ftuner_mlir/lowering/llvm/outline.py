"""Each top-level loop nest (or choice of loop nests) of a public function becomes a function of its
own, kept out of line.

torch-mlir's exports put every elementwise op, reduction and gather of a whole model into one function:
BERT-base's is hundreds of loop nests, and LLVM's -O3 passes are superlinear in function size (its one
unit ran opt for more than 7 minutes, while the same nests as separate functions compile in parallel
units, each in milliseconds). The outlined functions take what their loop uses from outside as
arguments (constants are cloned in, so LLVM still sees them) and return what it yields (the `scf.if`
that versions a batch matmul on a broadcast test yields the product's buffer: head_views.py); `no_inline`
keeps them apart. Left in the public function, those versioned nests made it grow with the layers:
opt + llc of BERT-base's `main` alone took 50 s, in one compilation unit (67 s for all its functions
compiled one at a time).
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import func

from ...ir.attributes import OUTLINED_ATTR
from ...ir.walk import defining_op, ops_where, public_functions

# loop nests, and the run-time choices between a parallel and a serial one (parallel_generics.py) or
# between a batch matmul on head views and its broadcast fallback (head_views.py, yielding its result)
OUTLINED_OPS = ("scf.for", "scf.if")


def outline_top_level_loops(module_op) -> None:
    module_block = module_op.regions[0].blocks[0]
    for fn in public_functions(module_op):
        name = fn.attributes["sym_name"].value
        nests = [(loop, nest(loop)) for loop in fn.regions[0].blocks[0].operations
                 if loop.operation.name in OUTLINED_OPS]
        nests = [(loop, ops) for loop, ops in nests
                 if all(_passable(v.type) for v in [*loop.results, *captured(ops)])]
        for number, (loop, ops) in enumerate(nests):
            outline(loop, ops, f"ftuner_outlined_{name}_{number}", module_block)


def _passable(t: ir.Type) -> bool:
    """A value of type `t` can cross a call (an AMX tile, say, cannot: it lives in the tile registers)."""
    return isinstance(t, (ir.IntegerType, ir.IndexType, ir.FloatType, ir.MemRefType, ir.VectorType))


def outline(loop, ops: list, name: str, module_block, cloned=None, returns: bool = True) -> None:
    """`loop` (with `ops`, its nest) as a call of a new private function `name` whose arguments are what
    the nest captures; the constants `cloned` accepts (default: all) are cloned into it instead. With
    `returns` False the function returns nothing (the caller no longer reads the loop's results)."""
    cloned = cloned or _is_constant
    outside = captured(ops)           # now: an earlier nest's outlining replaced the results this one reads
    constants = [v for v in outside if _is_constant(v) and cloned(v)]
    arguments = [v for v in outside if v not in constants]
    results = list(loop.results) if returns else []
    result_types = [r.type for r in results]
    with ir.InsertionPoint(loop), loop.location:
        call = func.CallOp(result_types, ir.FlatSymbolRefAttr.get(name), arguments)
    for result, replacement in zip(results, call.results):
        result.replace_all_uses_with(replacement)
    with ir.InsertionPoint(module_block), loop.location:
        outlined = func.FuncOp(name, ir.FunctionType.get([v.type for v in arguments], result_types))
        outlined.attributes["sym_visibility"] = ir.StringAttr.get("private")
        outlined.attributes[OUTLINED_ATTR] = ir.UnitAttr.get()
        body = outlined.add_entry_block()
    mapping = dict(zip(arguments, body.arguments))
    with ir.InsertionPoint(body), loop.location:
        for value in constants:
            mapping[value] = value.owner.clone().results[0]
    body.append(loop.operation)
    with ir.InsertionPoint(body), loop.location:
        func.ReturnOp(results)
    for op in ops:
        for i, operand in enumerate(op.operands):
            if operand in mapping:
                op.operands[i] = mapping[operand]


def _is_constant(value) -> bool:
    return getattr(defining_op(value), "name", None) == "arith.constant"


def nest(loop) -> list:
    """The loop and every op inside it (one walk, shared by the capture and the remapping)."""
    return [loop.operation, *ops_where(loop, lambda op: True)]


def captured(ops: list) -> list:
    """Values a nest's ops use but do not define, in first-use order."""
    defined = set()
    for op in ops:
        for region in op.regions:
            for block in region.blocks:
                defined.update(block.arguments)
        defined.update(op.results)
    seen, out = set(), []
    for op in ops:
        for operand in op.operands:
            if operand not in defined and operand not in seen:
                seen.add(operand)
                out.append(operand)
    return out


def keep_out_of_line(module_op) -> None:
    """After the LLVM conversion: outlined functions are never inlined back, and stay internal."""
    for op in module_op.regions[0].blocks[0].operations:
        if op.operation.name == "llvm.func" and OUTLINED_ATTR in op.attributes:
            op.attributes["no_inline"] = ir.UnitAttr.get()
            op.attributes["linkage"] = ir.Attribute.parse("#llvm.linkage<internal>")
