"""Packed call arguments for an `llvm.emit_c_interface` function, built from numpy arrays.

The packed entry point takes one `void**`: slot i points to argument i, and each argument is a pointer
to a ranked memref descriptor `{allocated, aligned, offset, shape[r], strides[r]}` (all 64-bit). Every
word of that lives in one int64 buffer, so packing costs about a microsecond of Python.
"""
from __future__ import annotations

import ctypes
from array import array


def data_address(a) -> int:
    """Address of an array's first element. `from_buffer` is 4x cheaper than `a.ctypes.data` but
    needs a writable buffer."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(a))
    except (TypeError, ValueError):       # read-only or empty
        return a.ctypes.data


def pack_arguments(arrays) -> tuple[array, int]:
    """(buffer, address of the packed slots). The buffer holds the descriptors, the pointers to them and
    the slots: keep it alive until the call returns. Arrays must be C-contiguous (checked by the caller)."""
    words: list[int] = []
    starts = []
    for a in arrays:
        starts.append(len(words))
        data = data_address(a)
        item = a.itemsize
        words += (data, data, 0, *a.shape, *[s // item for s in a.strides])
    n, descs_end = len(starts), len(words)
    buf = array("q", bytes(8 * (descs_end + 2 * n)))
    base = buf.buffer_info()[0]
    words += [base + 8 * s for s in starts]                       # pointer to each descriptor
    words += [base + 8 * (descs_end + i) for i in range(n)]       # slot i -> that pointer
    buf[:] = array("q", words)
    return buf, base + 8 * (descs_end + n)
