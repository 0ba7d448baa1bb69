"""Phase 2, on tensors: each matmul dispatch grows by what fuses into it (head views, cheap producers,
elementwise epilogues)."""
