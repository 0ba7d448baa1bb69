"""ftuner-tile: rewrite each op carrying `ftuner.ukernels` into a call to its dispatch function.

The dispatch function (see codegen/matmul.py) chooses the cache block from the runtime dims and covers
the iteration space exactly with static uKernel tiles: body tiles plus binary remainder strips.
"""
from __future__ import annotations

import dataclasses

from mlir import ir
from mlir.dialects import func, tensor

from ..codegen.matmul import dispatch_name, emit_all
from .base import ModulePass, PassFailure, location_of, walk
from .matmul_family import classify
from .select_ukernels import ATTR, ukernel_set_from_attr


def _dynamic(t: ir.Type) -> ir.Type:
    rt = ir.RankedTensorType(t)
    return ir.RankedTensorType.get([ir.ShapedType.get_dynamic_size()] * rt.rank, rt.element_type)


def _cast(value: ir.Value, to: ir.Type) -> ir.Value:
    return value if value.type == to else tensor.CastOp(to, value).result


def _add_functions(module_op, texts: dict[str, str]) -> None:
    """Add the functions of `texts` the module lacks. All are parsed together (they call each other)."""
    body = module_op.regions[0].blocks[0]
    present = {op.attributes["sym_name"].value for op in body.operations if "sym_name" in op.attributes}
    if present >= texts.keys():
        return
    parsed = ir.Module.parse("\n".join(texts.values()), module_op.context)
    for fn in list(parsed.body.operations):
        if fn.attributes["sym_name"].value not in present:
            body.append(fn.operation.detach_from_parent())


@dataclasses.dataclass(frozen=True)
class Tile(ModulePass):
    name = "ftuner-tile"
    summary = "Rewrite annotated ops into runtime shape dispatch over static uKernel tiles (body + remainders)"

    def run(self, module_op) -> None:
        for op in [o for o in walk(module_op) if ATTR in o.attributes]:
            self._rewrite(module_op, op)

    def _rewrite(self, module_op, op) -> None:
        kind = classify(op)
        try:
            uks = ukernel_set_from_attr(op.attributes[ATTR])
        except ValueError as err:
            raise PassFailure(location_of(op), str(err)) from None
        if kind is None:
            raise PassFailure(location_of(op), f"{ATTR} is attached to an op this pass cannot tile "
                                               f"('{op.operation.name}' with these operand types/maps)")
        if kind != (uks.family, uks.dtype):
            raise PassFailure(location_of(op), f"{ATTR} describes a {uks.dtype} {uks.family} but the op "
                                               f"is a {kind[1]} {kind[0]}")
        _add_functions(module_op, emit_all(uks))
        with ir.InsertionPoint(op), op.location:
            operands = [_cast(v, _dynamic(v.type)) for v in op.operands]
            result_type = op.results[0].type
            call = func.CallOp([_dynamic(result_type)], ir.FlatSymbolRefAttr.get(dispatch_name(uks)), operands)
            result = _cast(call.results[0], result_type)
        op.results[0].replace_all_uses_with(result)
        op.operation.erase()
