"""How a stage reports bad input: a located failure, formatted the way mlir-opt prints diagnostics."""
from __future__ import annotations

import re

from mlir import ir


class PassFailure(Exception):
    """A stage rejected its input at `location` (the op's ir.Location, or its text). Inside a pass
    manager the driver turns it into an MLIR error diagnostic there and signals the pass's failure (the
    upstream way: the pass manager stops and reports); elsewhere it is formatted like one."""

    def __init__(self, location, message: str):
        super().__init__(f"{location}: {message}")
        self.loc = location if isinstance(location, ir.Location) else None
        self.location = str(location)
        self.message = message


def location_of(op) -> ir.Location:
    return op.location


def fail(op, message: str):
    """Reject `op`: raises PassFailure at its location."""
    raise PassFailure(op.location, message)


def format_location(loc: str, filename: str | None = None) -> str:
    """`loc("x.mlir":3:7)` -> `x.mlir:3:7`, the way mlir-opt prints diagnostics."""
    m = re.search(r'"([^"]*)":(\d+):(\d+)', loc)
    if not m:
        return filename or "<unknown>"
    name = m.group(1)
    if filename and name in ("-", "<stdin>", ""):
        name = filename
    return f"{name}:{m.group(2)}:{m.group(3)}"


def format_mlir_error(err: ir.MLIRError, filename: str | None = None) -> str:
    lines = []
    for diag in err.error_diagnostics:
        lines.append(f"{format_location(str(diag.location), filename)}: error: {diag.message}")
        for note in diag.notes:
            lines.append(f"{format_location(str(note.location), filename)}: note: {note.message}")
    if not lines:
        lines.append(f"{filename or '<input>'}: error: {err.message}")
    return "\n".join(lines)
