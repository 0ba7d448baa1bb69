"""Measuring the few best analytic candidates once (each in a child process) into the tuning database."""
