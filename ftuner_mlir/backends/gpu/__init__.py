"""The GPU backend: lowered by a child process (worker.py, started with limits by ../isolate.py) to host
code with the kernels' PTX embedded; the host code is JIT'd in the calling process."""
