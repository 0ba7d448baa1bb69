"""The CPU backend: a native shared library built by a child process (worker.py, started with limits by
../isolate.py) through the LLVM toolchain (toolchain.py)."""
