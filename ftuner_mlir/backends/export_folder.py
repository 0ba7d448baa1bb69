"""What every exported folder holds besides the library: the loader (runtime/loader.py and what it
imports, as the package `ftuner_export`)."""
from __future__ import annotations

import shutil
from pathlib import Path

LOADER_FILES = {"loader.py": "__init__.py", "shape_rules.py": "shape_rules.py", "descriptors.py": "descriptors.py",
                "function.py": "function.py", "memref.py": "memref.py",
                "profiler.py": "profiler.py"}


def copy_loader(out: Path) -> None:
    package = out / "ftuner_export"
    package.mkdir(exist_ok=True)
    here = Path(__file__).parents[1] / "runtime"
    for src, dst in LOADER_FILES.items():
        shutil.copy(here / src, package / dst)
