"""Keep freed memory in the process instead of handing it back to the kernel on every call.

A compiled model allocates its intermediates (up to tens of MiB each) and frees them on every call.
glibc serves large requests with mmap and trims the heap top after each free, so every call pays for
fresh zeroed pages: measured on one BERT layer (batch 16, T=128), page faults were a fifth of the call.
With a fixed mmap threshold (glibc's largest, 32 MiB) and a high trim threshold, the freed blocks are
reused by the next call. The resident memory then stays at its high-water mark, as with a caching
allocator. compile() calls this unless FTUNER_RETURN_MEMORY=1 (settings.py).
"""
from __future__ import annotations

import ctypes
import functools

M_TRIM_THRESHOLD = -1                    # glibc's malloc.h
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20                # glibc's maximum (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit)
TRIM_THRESHOLD = 1 << 30


@functools.cache
def keep_freed_memory() -> bool:
    """Once per process; False where it does not apply (not glibc)."""
    try:
        # the process's own symbols (libc's among them): ctypes.util.find_library forks `ldconfig -p`
        # from a process that may hold a whole model (a warm start's 1.2 GB child, ~0.1 s)
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False                     # not glibc (musl, macOS): its own policy stays
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
