"""Phase 5: loops, outlined loop nests, failed asserts and the ABI table, then the LLVM dialect."""
