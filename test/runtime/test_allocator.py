"""Freed intermediates are reused, not faulted in again on the next call (runtime/allocator.py)."""
import subprocess
import sys
from pathlib import Path

import pytest

# Faults taken by the second of two rounds of "allocate 24 MiB, touch every page, free": glibc's
# default mmaps and unmaps the block each round; kept memory is touched already.
ROUNDS = """
import ctypes, resource, sys
sys.path.insert(0, {root!r})
if {keep}:
    from ftuner_mlir.runtime.allocator import keep_freed_memory
    assert keep_freed_memory()
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, (ctypes.c_size_t,)
libc.free.argtypes = (ctypes.c_void_p,)
size = 24 << 20
def round_faults():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    p = libc.malloc(size)
    ctypes.memset(p, 1, size)
    libc.free(p)
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
round_faults()
print(round_faults())
"""


def _second_round_faults(keep: bool) -> int:
    import ftuner_mlir
    root = str(Path(ftuner_mlir.__file__).parent.parent)
    out = subprocess.run([sys.executable, "-c", ROUNDS.format(root=root, keep=keep)], capture_output=True,
                         text=True, timeout=60, check=True)
    return int(out.stdout.strip())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_freed_memory_is_reused_not_faulted_again():
    pages = (24 << 20) // 4096
    assert _second_round_faults(keep=False) > pages // 2      # the default: fresh pages every round
    assert _second_round_faults(keep=True) < pages // 20
