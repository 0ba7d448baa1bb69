"""Descriptor entries of numpy arrays (see descriptors.py for the layout)."""
from __future__ import annotations

import ctypes



def data_address(a) -> int:
    """Address of an array's first element. `from_buffer` is 4x cheaper than `a.ctypes.data` but
    needs a writable buffer."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(a))
    except (TypeError, ValueError):       # read-only or empty
        return a.ctypes.data


def entries(arrays):
    """(address, shape, strides in elements) of C-contiguous arrays (checked by the caller)."""
    return [(data_address(a), a.shape, [s // a.itemsize for s in a.strides]) for a in arrays]
