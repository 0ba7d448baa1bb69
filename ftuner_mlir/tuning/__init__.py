"""Tuning the FTuner way: measure the few best analytic candidates once, keep the results on disk."""
