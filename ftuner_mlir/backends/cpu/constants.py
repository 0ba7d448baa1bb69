"""Large constants (a model's weights) stay raw bytes in a file beside the library, not LLVM constants.

Left in the LLVM dialect, every weight becomes a textual LLVM IR constant: BERT-base's 440 MB of
weights made mlir-translate write more than 2.6 GB of IR over 7 minutes before llc even started.
Instead, each constant global of at least THRESHOLD bytes becomes an external declaration and its bytes
go to `constants.bin`. The library only reserves their room: a page-aligned section without file
contents (like .bss) whose symbols sit at the blob's offsets, made by a few lines of assembly. The
loader maps the file over that section (runtime/loader.py): the bytes are written once, by the
compiler, and never copied into an object file or the library (for BERT-base that was the 435 MB
assembled by llvm-mc and copied again by the linker: ~2.5 s of the build).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from mlir import ir

from ...ir import weights
from ...ir.arena import Arena
from ...ir.resources import RESOURCE_NAME, blob_array, blob_spans, is_kind, resource_bytes

THRESHOLD = 4096                  # bytes; smaller constants stay in the code, where LLVM may fold them
BLOB_FILE = "constants.bin"


def _bytes_of(op, source: str, blobs: dict) -> bytes | np.ndarray | None:
    """The raw little-endian bytes of a global's value, or None when they cannot be read here. A blob
    made from an array (packed weights, external weights: ir/weights.py) is that array's memory; one
    of the source text is sliced out of it."""
    value = op.attributes["value"]
    if is_kind(ir.DenseResourceElementsAttr, value):
        made = blob_array(value)
        if made is not None:
            return made.reshape(-1).view(np.uint8)
        found = RESOURCE_NAME.match(str(value))
        if found is not None and found.group(1) in blobs:
            begin, end = blobs[found.group(1)]
            return bytes.fromhex(source[begin + 8:end])          # the first 4 bytes are the blob's alignment
        return resource_bytes(op)
    if is_kind(ir.DenseElementsAttr, value) and not ir.DenseElementsAttr(value).is_splat:
        try:
            return np.asarray(ir.DenseElementsAttr(value)).tobytes()
        except (TypeError, ValueError, RuntimeError):
            return None
    return None


def move_out(module, source: str, folder: Path, packed: Arena | None = None) -> list[tuple[str, int, int, int]]:
    """Large constant globals of the LLVM-dialect `module` become external declarations; their bytes
    are appended to folder/BLOB_FILE, except those already in it: the arrays of `packed`, the arena
    that file was made by (ir/arena.py). Returns (symbol, offset, size, alignment) per moved global."""
    blobs = blob_spans(source)
    moved = []
    with open(folder / BLOB_FILE, "ab" if packed is not None else "wb") as out:
        for op in module.body.operations:
            if op.operation.name != "llvm.mlir.global" or "constant" not in op.attributes \
                    or "value" not in op.attributes:
                continue
            data = _bytes_of(op, source, blobs)
            if data is None or len(data) < THRESHOLD:
                continue
            align = ir.IntegerAttr(op.attributes["alignment"]).value if "alignment" in op.attributes else 16
            offset = packed.offset_of(data) if packed is not None and isinstance(data, np.ndarray) else None
            if offset is None or offset % align:
                offset = -out.tell() % align + out.tell()
                out.write(b"\0" * (offset - out.tell()))
                out.write(data)
                weights.release(data)        # a weight read from its mapped file: its pages can go
            moved.append((ir.StringAttr(op.attributes["sym_name"]).value, offset, len(data), align))
            del op.attributes["value"]
            op.attributes["linkage"] = ir.Attribute.parse("#llvm.linkage<external>")
            op.attributes["dso_local"] = ir.UnitAttr.get()
    return moved


BASE_SYMBOL = ".Lftuner_constants"
REGION_SYMBOL = "ftuner_constants"    # what the loader looks up (dlsym) to map the file at
PAGE = 4096


def region(size: int) -> dict:
    """The manifest's record of the constants file of `size` bytes: file, the symbol the loader maps it
    at, its size. The whole file is mapped: it may also hold panels no symbol names (ir/arena.py: small
    ones stay in the code)."""
    return {"file": BLOB_FILE, "symbol": REGION_SYMBOL, "bytes": size}


def assembly(moved, size: int) -> str:
    """Assembly that reserves the room of the constants file of `size` bytes, page-aligned and in whole
    pages (the file is mapped over it, and over nothing else), and defines each moved symbol at its
    offset; those are hidden (nothing outside the library sees them), the region's start is not (the
    loader finds it)."""
    lines = ['\t.section .bss.ftuner_constants,"aw",@nobits', f"\t.p2align {PAGE.bit_length() - 1}",
             f"\t.globl {REGION_SYMBOL}", f"\t.type {REGION_SYMBOL},@object", f"\t.size {REGION_SYMBOL}, {size}",
             f"{REGION_SYMBOL}:", f"{BASE_SYMBOL}:", f"\t.zero {-size % PAGE + size}"]
    for symbol, offset, size, _ in moved:
        lines += [f"\t.globl {symbol}", f"\t.hidden {symbol}", f"\t.type {symbol},@object",
                  f"\t.size {symbol}, {size}", f"\t.set {symbol}, {BASE_SYMBOL} + {offset}"]
    return "\n".join(lines) + "\n"
