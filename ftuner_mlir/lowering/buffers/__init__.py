"""Phase 4: bufferization, and what needs buffers (AMX bodies, reshapes read in place, profiling), then
OpenMP."""
