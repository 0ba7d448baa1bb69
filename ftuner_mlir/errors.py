"""The exceptions the public API raises (a leaf module: everything may import it)."""
from __future__ import annotations


class CompileError(Exception):
    """The module could not be compiled. The message holds MLIR-style diagnostics
    (`file:line:col: error: ...`) or, when the compiler process died, the signal or limit that ended it,
    the last lines it printed, and a ready-to-paste reproducer."""
