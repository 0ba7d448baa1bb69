"""The compiler process every backend runs: `python -m ftuner_mlir.backends.<backend>.worker REQUEST.json`
(or `--spare`, started before its request: child_process.Spare).

The request names the MLIR text, the backend's options (JSON) and a folder. The backend's `build`
lowers the module and writes its product and `module.json` (the manifest) there. A clean failure writes
its diagnostics to `error.txt` and exits with 1; anything that kills the process (an MLIR assertion, an
LLVM fatal error, a limit) is reported by the parent (isolate.py) from the exit status.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .digest import file_digest

MANIFEST = "module.json"
ERROR = "error.txt"
OUT_OF_MEMORY_STATUS = 3


SEAL = "manifest_sha256"


def _manifest_hash(manifest: dict) -> str:
    body = {k: v for k, v in manifest.items() if k != SEAL}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def write_manifest(folder: Path, manifest: dict) -> None:
    """`module.json`, sealed: a hash over its own content, which holds the library's hash, so an edited
    manifest (result dims, dtypes: the tables every call trusts) is caught like an edited library."""
    manifest = {**manifest, SEAL: _manifest_hash(manifest)}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1))


def intact(folder: Path, manifest: dict) -> bool:
    """The manifest's seal matches its content and the bytes of the library, and of the constants file
    beside it where there is one (cpu/constants.py), match the manifest's hashes."""
    constants = manifest.get("constants")
    return manifest.get(SEAL) == _manifest_hash(manifest) and \
        file_digest(folder / manifest["library"]) == manifest.get("library_digest") and \
        (constants is None or file_digest(folder / constants["file"]) == constants["digest"])


def main(argv: list[str], build, options_from_json, load=lambda: None) -> int:
    """Run `build(source, options, out)` on the request file argv[0]; the process's exit status. A
    spare (argv [--spare], child_process.Spare) runs `load()` first and reads its request from stdin."""
    from ..errors import CompileError
    from .child_process import spare_job

    argv = spare_job(argv, load)
    if argv is None:
        return 0

    request = json.loads(Path(argv[0]).read_text())
    out = Path(request["out_dir"])
    try:
        build(Path(request["source_file"]).read_text(), options_from_json(request["options"]), out)
    except CompileError as err:
        (out / ERROR).write_text(str(err))
        return 1
    except MemoryError:
        (out / ERROR).write_text("the compiler process ran out of memory (MemoryError)")
        return OUT_OF_MEMORY_STATUS
    return 0
