"""Failed `cf.assert`s reported, not fatal. Upstream lowers cf.assert to a call of abort(), which would
end the Python process that called the compiled code (torch-mlir's exports hold dozens: index bounds of
embedding lookups, broadcast and reshape sizes). Each assert becomes a store of its number into the
module's i32 global when its condition is false; after every call the runtime calls the module's
TAKE_FUNCTION (the number, 0 for none, and the global reset) and raises with the message, which the
module keeps in its ASSERTS_ATTR attribute.
The first failure of a call wins; the code after it runs on (it may read garbage, never a fault: the
shape rules checked every size before the call)."""
from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, func, memref, scf

from ..ir.walk import walk

ASSERT_GLOBAL = "ftuner_failed_assert"
TAKE_FUNCTION = "ftuner_take_failed_assert"
ASSERTS_ATTR = "ftuner.asserts"


def report_failed_asserts(module_op) -> None:
    asserts = [op for op in walk(module_op) if op.operation.name == "cf.assert"]
    if not asserts:
        return
    i32 = ir.IntegerType.get_signless(32)
    flag_type = ir.MemRefType.get([], i32)
    with ir.InsertionPoint.at_block_begin(module_op.regions[0].blocks[0]), module_op.location:
        memref.GlobalOp(ASSERT_GLOBAL, ir.TypeAttr.get(flag_type), sym_visibility="private",
                        initial_value=ir.DenseElementsAttr.get_splat(ir.RankedTensorType.get([], i32),
                                                                     ir.IntegerAttr.get(i32, 0)))
        _take_function(flag_type)
    messages = []
    for number, op in enumerate(asserts, start=1):
        messages.append(f"{ir.StringAttr(op.attributes['msg']).value} ({_where(op.location)})")
        with ir.InsertionPoint(op), op.location:
            true = arith.ConstantOp(ir.IntegerType.get_signless(1), 1)
            failed = arith.XOrIOp(op.operands[0], true)
            branch = scf.IfOp(failed)
            with ir.InsertionPoint(branch.then_block):
                flag = memref.GetGlobalOp(flag_type, ASSERT_GLOBAL)
                earlier = memref.LoadOp(flag, [])           # the first failure of a call wins
                none_yet = arith.CmpIOp(arith.CmpIPredicate.eq, earlier, arith.ConstantOp(i32, 0))
                memref.StoreOp(arith.SelectOp(none_yet, arith.ConstantOp(i32, number), earlier), flag, [])
                scf.YieldOp([])
        op.operation.erase()
    module_op.attributes[ASSERTS_ATTR] = ir.ArrayAttr.get([ir.StringAttr.get(m) for m in messages])


def _take_function(flag_type) -> None:
    """`func.func @ftuner_take_failed_assert() -> i32`: the global's value, and the global reset to 0."""
    i32 = flag_type.element_type
    take = func.FuncOp(TAKE_FUNCTION, ir.FunctionType.get([], [i32]))
    with ir.InsertionPoint(take.add_entry_block()):
        flag = memref.GetGlobalOp(flag_type, ASSERT_GLOBAL)
        number = memref.LoadOp(flag, [])
        memref.StoreOp(arith.ConstantOp(i32, 0), flag, [])
        func.ReturnOp([number])


def _where(location) -> str:
    text = str(location)
    return text[4:-1] if text.startswith("loc(") else text


def messages(module_op) -> list[str]:
    """The assert messages in the order of their numbers (empty when the module has no cf.assert)."""
    if ASSERTS_ATTR not in module_op.attributes:
        return []
    return [ir.StringAttr(a).value for a in ir.ArrayAttr(module_op.attributes[ASSERTS_ATTR])]
