"""Phase 1, on tensors: constants folded, the destination-passing calling convention, graph clean-ups."""
