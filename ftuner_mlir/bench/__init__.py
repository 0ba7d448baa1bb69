"""The benchmark: workloads, baselines measured side by side, the machine's limits, and the report."""
