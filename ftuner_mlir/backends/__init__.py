"""The only place that knows CPU from GPU: how each backend lowers, builds, caches, loads and exports."""
