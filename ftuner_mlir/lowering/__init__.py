"""Lowering stages after tiling: the calling convention, uKernel vectorization, CPU pipeline to LLVM."""
