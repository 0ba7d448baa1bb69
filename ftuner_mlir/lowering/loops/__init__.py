"""Phase 3, on tensors: reshapes, pads, transposes, row ops and copies as loops over rows and the cores;
the uKernels as vector code."""
