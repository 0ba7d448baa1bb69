"""The exceptions the public API raises (a leaf module: everything may import it)."""
from __future__ import annotations


class CompileError(Exception):
    """The module could not be compiled. The message holds MLIR-style diagnostics
    (`file:line:col: error: ...`) or, when the compiler process died, the signal or limit that ended it,
    the last lines it printed, and a ready-to-paste reproducer."""


class InvalidOptions(CompileError, ValueError):
    """compile() was given options no compilation can use (an -O level of 7, a negative thread count);
    raised before anything runs, the message naming the option. Both a CompileError and a ValueError."""
