"""Hardware models: what a target machine offers, as plain data."""
from .cpu import CpuTarget, PRESETS, detect_host
from .targets import parse_target

__all__ = ["CpuTarget", "PRESETS", "detect_host", "parse_target"]
