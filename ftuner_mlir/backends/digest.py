"""SHA-256 of large buffers on every core. A warm start hashes hundreds of MB twice (the model's weights
for its key, the cached library for its seal: ~440 MB each for BERT-base); one thread does ~1 GB/s.

The bytes are cut into fixed pieces, each hashed on a thread (hashlib lets go of the GIL), and the result
is the SHA-256 of each buffer's length and its pieces' digests, in order: as strong as SHA-256 itself, not equal to
the plain hash of the bytes (nothing compares it with one)."""
from __future__ import annotations

import concurrent.futures
import hashlib
import os
from pathlib import Path

PIECE = 16 << 20
WORKERS = min(8, os.cpu_count() or 1)


def digest(buffers) -> str:
    """The hash of the buffers, in order (each bytes-like, any length; where one ends counts)."""
    views = [memoryview(buffer).cast("B") for buffer in buffers]
    pieces = [view[start:start + PIECE] for view in views for start in range(0, len(view), PIECE)]
    with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
        digests = iter(pool.map(lambda piece: hashlib.sha256(piece).digest(), pieces))
        return _combined([(len(view), [next(digests) for _ in range(0, len(view), PIECE)]) for view in views])


def file_digest(path: Path) -> str:
    """digest([the file's bytes]). Each thread reads its own piece (os.pread), so at most WORKERS pieces
    are in memory: not a map of the file, whose pages would count in the process's resident memory and
    address space (the compiler child runs under a limit) for a library of GBs."""
    with open(path, "rb") as f:
        fd, size = f.fileno(), os.fstat(f.fileno()).st_size
        with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
            digests = pool.map(lambda start: hashlib.sha256(os.pread(fd, min(PIECE, size - start), start)).digest(),
                               range(0, size, PIECE))
            return _combined([(size, list(digests))])


def _combined(buffers: list[tuple[int, list[bytes]]]) -> str:
    """The SHA-256 of each buffer's length and its pieces' digests, in order."""
    total = hashlib.sha256()
    for length, digests in buffers:
        total.update(length.to_bytes(8, "little") + b"".join(digests))
    return total.hexdigest()
