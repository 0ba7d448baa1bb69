"""Private functions with identical bodies merged into one: calls to the copies call the first.

Passes that make a function per site make the same function once per layer of a model: each fused
epilogue gets its own copy of a dispatch (epilogues.py; a BERT layer's bias adds, bias + GELU and
residual adds are the same in every layer), and each top-level loop nest becomes a function
(outline.py; a layer norm or softmax row chain is the same nest in every layer, with the layer's
buffers as arguments). LLVM compiled every copy: a BERT-base layer added ~4 s of opt + llc. Merged,
a model's code grows with the kinds of ops, not with its layers.

Two functions are the same when their printed forms are, but for their names: nothing else is
compared (not types alone), so only truly identical code is merged.
"""
from __future__ import annotations

from mlir import ir

from ...ir.walk import private_functions


def merge_identical_functions(module_op) -> int:
    """Merge until no two private functions print the same; returns how many were removed. Repeated
    because merging callees can make their callers identical."""
    removed = 0
    while merged := _merge_once(module_op):
        removed += merged
    return removed


def _merge_once(module_op) -> int:
    first_of: dict[str, str] = {}
    duplicates = []
    for fn in private_functions(module_op):            # public functions are entry points: never merged
        name = ir.StringAttr(fn.attributes["sym_name"]).value
        key = _body_text(fn, name)
        if key in first_of:
            duplicates.append((fn, name, first_of[key]))
        else:
            first_of[key] = name
    for fn, name, kept in duplicates:
        ir.SymbolTable.replace_all_symbol_uses(name, kept, module_op)
        fn.operation.erase()
    return len(duplicates)


def _body_text(fn, name: str) -> str:
    """The function as printed (every attribute and constant in full), its own name left out."""
    return fn.operation.get_asm(large_elements_limit=None).replace(f"@{name}(", "@(", 1)
