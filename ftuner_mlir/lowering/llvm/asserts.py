"""Failed `cf.assert`s reported to the call that failed them, not fatal. Upstream lowers cf.assert to
a call of abort(), which would end the Python process that called the compiled code (torch-mlir's
exports hold dozens: index bounds of embedding lookups, broadcast and reshape sizes).

Each public function of a module with asserts takes one more argument after its results, its *status*:
a `memref<i32>` the caller zeroes before the call. An assert whose condition is false stores its number
there (the first failure wins); the runtime raises with the message, which the module keeps in its
ASSERTS_ATTR attribute. The status is threaded as a trailing argument through every function that
reaches an assert, so it is per call: threads calling one module concurrently, and the OpenMP workers
of one call, all write to the status of the call they serve, never to a global another call reads.
The code after a failure runs on (it may read garbage, never a fault: the shape rules checked every
size before the call, and data-dependent reads are clamped, safe_indexing.py)."""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, func, memref, scf

from ...ir.attributes import ASSERTS_ATTR
from ...ir.walk import enclosing_function, functions, ops_named



def status_type() -> ir.MemRefType:
    return ir.MemRefType.get([], ir.IntegerType.get_signless(32))


def report_failed_asserts(module_op) -> None:
    asserts = ops_named(module_op, "cf.assert")
    if not asserts:
        return
    bodies = {_name(fn): fn for fn in functions(module_op) if fn.regions[0].blocks}
    callers = _callers(bodies)
    status_of = {name: _add_status_argument(bodies[name]) for name in _reaching(bodies, asserts, callers)}
    for name in status_of:
        for call in callers.get(name, ()):
            _pass_status(call, status_of[_name(enclosing_function(call))])
    messages = []
    for number, op in enumerate(asserts, start=1):
        messages.append(f"{ir.StringAttr(op.attributes['msg']).value} ({_where(op.location)})")
        _store_on_failure(op, number, status_of[_name(enclosing_function(op))])
    module_op.attributes[ASSERTS_ATTR] = ir.ArrayAttr.get([ir.StringAttr.get(m) for m in messages])


def _name(fn) -> str:
    return ir.StringAttr(fn.attributes["sym_name"]).value


def _callers(bodies: dict) -> dict:
    """Callee name -> the func.call ops calling it, in functions with bodies."""
    out: dict = {}
    for fn in bodies.values():
        for op in ops_named(fn, "func.call"):
            out.setdefault(ir.FlatSymbolRefAttr(op.attributes["callee"]).value, []).append(op)
    return out


def _reaching(bodies: dict, asserts: list, callers: dict) -> list[str]:
    """Every public function (one calling convention for all of them), the functions holding an
    assert, and all their callers, transitively (a callee given the status needs it from its callers):
    in module order."""
    todo = [name for name, fn in bodies.items() if "sym_visibility" not in fn.attributes]
    todo += [_name(enclosing_function(op)) for op in asserts]
    reach: set = set()
    while todo:
        name = todo.pop()
        if name not in reach:
            reach.add(name)
            todo += [_name(enclosing_function(call)) for call in callers.get(name, ())]
    return [name for name in bodies if name in reach]


def _add_status_argument(fn) -> ir.Value:
    block = fn.regions[0].blocks[0]
    status = block.add_argument(status_type(), fn.location)
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([*ftype.inputs, status_type()],
                                                                          ftype.results))
    return status


def _pass_status(call, status: ir.Value) -> None:
    """The call again with `status` as its last operand (an op's operand list cannot grow)."""
    with ir.InsertionPoint(call), call.location:
        again = func.CallOp([r.type for r in call.results], ir.FlatSymbolRefAttr(call.attributes["callee"]),
                            [*call.operands, status])
    for name in ("no_inline", "arg_attrs", "res_attrs"):
        if name in call.attributes:
            again.attributes[name] = call.attributes[name]
    for old, new in zip(call.results, again.results):
        old.replace_all_uses_with(new)
    call.operation.erase()


def _store_on_failure(op, number: int, status: ir.Value) -> None:
    """`if (!cond && *status == 0) *status = number`, in place of the assert."""
    i32 = ir.IntegerType.get_signless(32)
    with ir.InsertionPoint(op), op.location:
        true = arith.ConstantOp(ir.IntegerType.get_signless(1), 1)
        branch = scf.IfOp(arith.XOrIOp(op.operands[0], true))
        with ir.InsertionPoint(branch.then_block):
            earlier = memref.LoadOp(status, [])              # the first failure of a call wins
            none_yet = arith.CmpIOp(arith.CmpIPredicate.eq, earlier, arith.ConstantOp(i32, 0))
            memref.StoreOp(arith.SelectOp(none_yet, arith.ConstantOp(i32, number), earlier), status, [])
            scf.YieldOp([])
    op.operation.erase()


def _where(location) -> str:
    text = str(location)
    return text[4:-1] if text.startswith("loc(") else text


def messages(module_op) -> list[str]:
    """The assert messages in the order of their numbers (empty when the module has no cf.assert)."""
    if ASSERTS_ATTR not in module_op.attributes:
        return []
    return [ir.StringAttr(a).value for a in ir.ArrayAttr(module_op.attributes[ASSERTS_ATTR])]
