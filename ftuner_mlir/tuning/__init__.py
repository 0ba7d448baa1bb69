"""The tuning database: measured register tiles per target, read by uKernel selection."""
