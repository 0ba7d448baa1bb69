"""The CPU lowering after tiling, one sub-package per phase of ftuner-lower-cpu (passes/lower_cpu.py
lists the phases and their passes in order):

    graph/      on tensors: constants folded, the calling convention, graph clean-ups
    dispatch/   on tensors: what fuses into each matmul dispatch (head views, producers, epilogues)
    loops/      on tensors: row ops, copies, reshapes and uKernels as loops and vector code
    buffers/    bufferization, AMX bodies, in-place reshapes, OpenMP
    llvm/       loops, outlined loop nests, asserts, the ABI table and the LLVM dialect

transform.py runs the transform-dialect scripts several phases use; gpu.py is the GPU path's lowering.
"""
