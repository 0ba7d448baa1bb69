"""A CPU module as an exported folder: the library compile() builds (same options, same cache), the
OpenMP runtime it needs, the manifest and the loader."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from ...errors import CompileError
from ...runtime import libs
from ..export_folder import copy_loader
from ..isolate import built
from . import compile as cpu_compile


def export(source: str, target, out: Path, name: str, options: dict) -> Path:
    library = f"lib{name}.so"
    with built(cpu_compile.request(source, target, **options)) as (folder, _):
        manifest = json.loads((folder / "module.json").read_text())
        shutil.copy(folder / manifest["library"], out / library)
        if "constants" in manifest:                  # the weights the loader maps beside the library
            shutil.copy(folder / manifest["constants"]["file"], out / manifest["constants"]["file"])
    if "libmlir_c_runner_utils.so" in manifest["needs"]:
        # it depends on libMLIR and libLLVM (hundreds of MB): not something to ship
        raise CompileError("this module calls MLIR's runtime helpers (a strided memref copy), which an export "
                           "cannot ship yet; compile() runs it in a process with the MLIR wheels installed")
    for needed, path in libs.runtime_libraries(manifest["needs"]).items():
        shutil.copy(path, out / needed)
    manifest["library"] = library
    (out / "module.json").write_text(json.dumps(manifest, indent=1))
    copy_loader(out)
    return out
