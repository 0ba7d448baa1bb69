"""Compiling a CPU module into a native shared library: the lowering (pipeline.py), the LLVM toolchain
(toolchain.py), the child process that runs both (worker.py, started with limits by isolate.py), and
the on-disk cache of finished libraries (cache.py)."""
