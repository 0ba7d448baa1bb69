"""Ranked memref descriptors built straight from numpy arrays (the layout the C interface expects)."""
from __future__ import annotations

import ctypes
import functools

import numpy as np


@functools.cache
def descriptor_type(rank: int) -> type[ctypes.Structure]:
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p), ("offset", ctypes.c_int64)]
    if rank:
        fields += [("shape", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    return type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})


def descriptor(array: np.ndarray) -> ctypes.Structure:
    """Descriptor of a C-contiguous array (checked by the caller)."""
    desc = descriptor_type(array.ndim)()
    desc.allocated = desc.aligned = array.ctypes.data
    desc.offset = 0
    if array.ndim:
        desc.shape[:] = array.shape
        desc.strides[:] = [s // array.itemsize for s in array.strides]
    return desc
