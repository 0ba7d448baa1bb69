"""Packed arguments for an `llvm.emit_c_interface` entry point (standard library only: the AOT export
copies this file next to the exported library).

The packed entry point takes one `void**`: slot i points to argument i, and each argument is a pointer
to a ranked memref descriptor `{allocated, aligned, offset, shape[r], strides[r]}` (all 64-bit). Every
word lives in one int64 buffer, so packing costs about a microsecond of Python.
"""
from __future__ import annotations

from array import array


def descriptor_words(entries) -> tuple[list[int], list[int]]:
    """(all descriptor words, where each descriptor starts) for (data address, shape, strides) entries."""
    words: list[int] = []
    starts = []
    for data, shape, strides in entries:
        starts.append(len(words))
        words += (data, data, 0, *shape, *strides)
    return words, starts


def pack_descriptors(entries) -> tuple[array, int, list[int]]:
    """`entries`: (data address, shape, strides in elements) per argument. Returns (buffer, address of
    the packed slots for `_mlir_<fn>`, descriptor addresses for `_mlir_ciface_<fn>`); keep the buffer
    alive until the call returns."""
    words, starts = descriptor_words(entries)
    n, descs_end = len(starts), len(words)
    buf = array("q", bytes(8 * (descs_end + 2 * n)))
    base = buf.buffer_info()[0]
    pointers = [base + 8 * s for s in starts]
    words += pointers                                             # pointer to each descriptor
    words += [base + 8 * (descs_end + i) for i in range(n)]       # slot i -> that pointer
    buf[:] = array("q", words)
    return buf, base + 8 * (descs_end + n), pointers


class DescriptorBuffer:
    """pack_descriptors for repeated calls with the same ranks: the buffer stays at one address, so the
    pointers and slots are written once, a call copies in a `template` only when the shapes differ
    from the previous call's, and then the data addresses. One per thread."""

    def __init__(self, ranks):
        self.buf, self.packed, self.pointers = pack_descriptors([(0, (0,) * r, (0,) * r) for r in ranks])
        self.size = sum(3 + 2 * r for r in ranks)
        self._words = None                 # the template in the buffer now

    def write(self, words: array, starts: list[int], addresses) -> int:
        """Put a `template` (unless it is there already) and each descriptor's data address (its
        allocated and aligned pointer words) into the buffer. Returns the packed address."""
        buf = self.buf
        if words is not self._words:
            buf[:self.size] = words
            self._words = words
        for start, address in zip(starts, addresses):
            buf[start] = buf[start + 1] = address
        return self.packed


def row_major_strides(shape) -> list[int]:
    """Strides in elements of a C-contiguous array (what numpy reports for it, up to dims of size <= 1,
    whose stride is never stepped by)."""
    out, step = [], 1
    for size in reversed(shape):
        out.append(step)
        step *= size
    return out[::-1]


def template(shapes) -> tuple[array, list[int]]:
    """The descriptor words for C-contiguous arrays of `shapes`, with zeros where the data addresses go,
    and where each descriptor starts (its allocated and aligned pointer words)."""
    words, starts = descriptor_words([(0, shape, row_major_strides(shape)) for shape in shapes])
    return array("q", words), starts
