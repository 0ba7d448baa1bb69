"""The on-disk cache of compiled modules, in the manner of Triton's.

An entry is a folder `<cache dir>/modules/<key[:2]>/<key>/` holding the library and its manifest. The
key hashes everything that decides the code: the MLIR text, the BuildOptions (target, threads, -O
level, forced tile), the uKernel tiles the tuning database supplies, the LLVM CPU the code is built
for, and the versions of this package (a hash of its source files) and of the MLIR/LLVM wheels.
Entries are built in a private temporary folder and renamed into place (atomic; when two processes
race, the first rename wins and the other uses its entry). An entry whose manifest is unreadable or
whose manifest or library does not match its seal is deleted and rebuilt, never loaded.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
from pathlib import Path

from .. import settings
from ..version import wheel_versions
from . import child_process, worker


@functools.cache
def versions() -> str:
    """This package's source (every .py file, hashed) and the MLIR/LLVM wheel versions."""
    h = hashlib.sha256()
    package = Path(__file__).resolve().parents[1]
    for path in sorted(package.rglob("*.py")):
        h.update(str(path.relative_to(package)).encode())
        h.update(path.read_bytes())
    wheels = " ".join(f"{name}=={v}" for name, v in wheel_versions().items())
    return f"ftuner-src-{h.hexdigest()[:16]} {wheels}"


def key(*parts: str) -> str:
    """A hash of `parts` (the source, the options, ...) and of versions()."""
    h = hashlib.sha256()
    for part in (*parts, versions()):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def root() -> Path:
    return settings.cache_dir() / "modules"


def entry_dir(k: str) -> Path:
    return root() / k[:2] / k


def valid(folder: Path, k: str | None = None) -> bool:
    """The manifest parses, names this key, is sealed (worker.write_manifest) and the library's bytes
    match its hash."""
    try:
        manifest = json.loads((folder / worker.MANIFEST).read_text())
        if k is not None and manifest.get("key") != k:
            return False
        return worker.intact(folder, manifest)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def lookup(k: str) -> Path | None:
    """The entry's folder if it is valid; a corrupt entry is deleted."""
    folder = entry_dir(k)
    if not folder.exists():
        return None
    if valid(folder, k):
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    return None


def new_build_dir() -> Path:
    """A private folder to build an entry in (same file system as the entries: rename is atomic)."""
    root().mkdir(parents=True, exist_ok=True)
    return child_process.scratch_dir("building-", root())


def publish(build: Path, k: str) -> Path:
    """Move a finished build into place; if another process published the key first, use its entry."""
    manifest_path = build / worker.MANIFEST
    manifest = json.loads(manifest_path.read_text())
    manifest["key"] = k
    worker.write_manifest(build, manifest)
    for scratch in ("input.mlir", "request.json"):
        (build / scratch).unlink(missing_ok=True)
    final = entry_dir(k)
    final.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.rename(build, final)
    except OSError:                       # already there (a concurrent build): keep the valid one
        shutil.rmtree(build, ignore_errors=True)
        if not valid(final, k):
            raise
    return final


def entries() -> list[tuple[Path, int, dict]]:
    """(folder, bytes, manifest) of every entry."""
    out = []
    for manifest_path in sorted(root().glob("??/*/" + worker.MANIFEST)):
        folder = manifest_path.parent
        size = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
        try:
            manifest = json.loads(manifest_path.read_text())
        except (OSError, ValueError):
            manifest = {}
        out.append((folder, size, manifest))
    return out


def clear() -> int:
    """Delete every entry (and leftover build folders); the number of entries deleted."""
    n = len(entries())
    shutil.rmtree(root(), ignore_errors=True)
    return n
