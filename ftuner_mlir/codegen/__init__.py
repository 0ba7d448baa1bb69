"""Textual IR for the functions the tile pass adds: dispatch, row strips, uKernels."""
