"""The module's symbols, and adding generated functions to it once each."""
from __future__ import annotations

from mlir import ir


def symbols(module_op) -> set[str]:
    body = module_op.regions[0].blocks[0]
    return {op.attributes["sym_name"].value for op in body.operations if "sym_name" in op.attributes}


def add_functions(module_op, present: set[str], name: str, emit, origin: ir.Location) -> None:
    """Unless the module has the symbol `name` (`present`: its symbols, kept up to date here), add the
    functions of `emit()` (symbol -> builder) it lacks, at the module's end, in that order. Each is
    built located at `origin` (the op that first needed it) under the function's name, so a later
    diagnostic in generated code names the user's op. Emitting and the symbol set cost the same for the
    thousandth op as for the first."""
    if name in present:
        return
    body = module_op.regions[0].blocks[0]
    for symbol, build in emit().items():
        if symbol in present:
            continue
        with ir.InsertionPoint(body), ir.Location.name(symbol, childLoc=origin):
            build()
        present.add(symbol)
