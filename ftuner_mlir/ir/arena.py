"""Packed weights written straight into the file the library's constants are loaded from.

A compile packs every weight into micro-panels (codegen/weight_panels.py). Held in memory, the panels
of a model stay there until the constants are written out at the end of the MLIR passes: with the
weights themselves that was twice the weights' bytes at the compiler's peak. Inside `writing_into(path)`,
`empty` places new arrays in a shared mapping of that file instead: once written, `release` hands
their pages to the page cache (the kernel writes them back; a later read maps them in again), and the
build keeps the file as its `constants.bin`, so a panel is never copied again (backends/cpu/constants.py
records where each one lies). Outside it (ftuner-opt, in-process compiles) `empty` is `np.empty`.
"""
from __future__ import annotations

import contextlib
import mmap
import os
from pathlib import Path

import numpy as np

ALIGNMENT = 64                    # bytes: every array starts at a multiple (a cache line, any global's)
CHUNK = 64 << 20                  # bytes mapped at a time; the file grows chunk by chunk


class Arena:
    """A file that grows by mapped chunks, each array placed in one chunk at an aligned offset."""

    def __init__(self, path: Path):
        self.end = 0                                    # bytes in use
        self._file = open(path, "w+b")
        self._chunks: list[tuple[int, int, int, mmap.mmap]] = []     # (address, file offset, size, map)

    def empty(self, shape, dtype) -> np.ndarray:
        dtype = np.dtype(dtype)
        nbytes = max(int(np.prod(shape)) * dtype.itemsize, 1)
        offset = -(-self.end // ALIGNMENT) * ALIGNMENT
        _, start, _, mapping = self._chunk_for(offset, nbytes)
        self.end = offset + nbytes
        return np.frombuffer(mapping, dtype, int(np.prod(shape)), offset - start).reshape(shape)

    def _chunk_for(self, offset: int, nbytes: int):
        if self._chunks:
            chunk = self._chunks[-1]
            if offset + nbytes <= chunk[1] + chunk[2]:
                return chunk
        start = offset // mmap.PAGESIZE * mmap.PAGESIZE
        size = max(CHUNK, -(-(offset + nbytes - start) // mmap.PAGESIZE) * mmap.PAGESIZE)
        os.ftruncate(self._file.fileno(), start + size)
        mapping = mmap.mmap(self._file.fileno(), size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE,
                            offset=start)
        chunk = (np.frombuffer(mapping, np.uint8).ctypes.data, start, size, mapping)
        self._chunks.append(chunk)
        return chunk

    def _chunk_of(self, array: np.ndarray):
        low, high = np.lib.array_utils.byte_bounds(array)
        for chunk in self._chunks:
            if chunk[0] <= low and high <= chunk[0] + chunk[2]:
                return chunk
        return None

    def offset_of(self, array: np.ndarray) -> int | None:
        """Where `array`'s bytes lie in the file, when it is one of this arena's arrays."""
        chunk = self._chunk_of(array)
        return None if chunk is None else chunk[1] + np.lib.array_utils.byte_bounds(array)[0] - chunk[0]

    def release(self, array: np.ndarray) -> None:
        """`array` is written: its whole pages leave this process for the page cache."""
        chunk = self._chunk_of(array)
        if chunk is not None:
            drop_pages(chunk[3], chunk[0], array)

    def close(self) -> None:
        """The file cut to the bytes in use; the mappings stay valid while arrays refer to them."""
        self._file.truncate(self.end)
        self._file.close()


def drop_pages(mapping: mmap.mmap, address: int, array: np.ndarray) -> None:
    """MADV_DONTNEED on the whole pages under `array` in `mapping` (which starts at `address`): they
    leave this process, the bytes stay in the file (a later read maps them in again). The pages at
    the edges may hold a neighbour and stay."""
    low, high = (bound - address for bound in np.lib.array_utils.byte_bounds(array))
    page = mmap.PAGESIZE
    low, high = -(-low // page) * page, high // page * page
    if high > low:
        mapping.madvise(mmap.MADV_DONTNEED, low, high - low)


_active: Arena | None = None


@contextlib.contextmanager
def writing_into(path: Path):
    """New arrays from `empty` go into the file at `path` (made anew) until the block ends; yields the
    Arena, which is closed (cut to its use) at the end."""
    global _active
    arena = Arena(path)
    _active = arena
    try:
        yield arena
    finally:
        _active = None
        arena.close()


def empty(shape, dtype) -> np.ndarray:
    """An uninitialized array: in the active arena's file, or in memory when none is active."""
    return _active.empty(shape, dtype) if _active is not None else np.empty(shape, dtype)


def release(array: np.ndarray) -> None:
    """`array` (from `empty`) is written and will rarely be read again: its pages go, when it is in a file."""
    if _active is not None:
        _active.release(array)
