"""The data address of a numpy array, for its memref descriptor (see descriptors.py)."""
from __future__ import annotations

import ctypes


def data_address(a) -> int:
    """Address of an array's first element. `from_buffer` is 4x cheaper than `a.ctypes.data` but
    needs a writable buffer."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(a))
    except (TypeError, ValueError):       # read-only or empty
        return a.ctypes.data
