"""The CPU compiler process: `python -m ftuner_mlir.backends.cpu.worker REQUEST.json` (../worker.py).

Lowers the module (../lower.py) with the request's BuildOptions, builds the shared library
(toolchain.py) and writes the manifest: functions and their shape rules, uKernel sets, the runtime
libraries the code needs.
"""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time
from pathlib import Path

from ..digest import file_digest
from ..worker import main, write_manifest

LIBRARY = "libmodule.so"
FORMAT = 2                 # 2: large constants in a file beside the library (manifest['constants'])


def _symbols(library: Path, *flags: str) -> set[str]:
    from ...runtime import libs
    out = subprocess.run([libs.tool("llvm-nm"), "--format=just-symbols", *flags, str(library)],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    return {line.split("@")[0] for line in out.split()}


def needed_libraries(library: Path) -> list[str]:
    """Runtime libraries the generated code calls into, by file name, read from its undefined symbols:
    the OpenMP runtime (multi-threaded code) and MLIR's C runner utils (strided memref copies)."""
    from ...runtime import libs

    undefined = _symbols(library, "--undefined-only")
    needs = []
    if any(sym.startswith(("__kmpc_", "omp_")) for sym in undefined):
        needs.append("libiomp5.so")
    if undefined & _symbols(Path(libs.c_runner_utils()), "--dynamic", "--defined-only"):
        needs.append("libmlir_c_runner_utils.so")
    return needs



def build(source: str, options, out: Path) -> dict:
    """Lower `source`, build the library in `out`, return the manifest (also written there)."""
    from mlir import ir

    from ...lowering.buffers import profile
    from ...ir import arena
    from ...ir.attributes import USES_AMX_ATTR
    from ..lower import lower_cpu
    from . import constants
    from .toolchain import assemble, build_library

    t0 = time.perf_counter()
    context = ir.Context()
    with arena.writing_into(out / constants.BLOB_FILE) as packed:       # the panels' bytes go there
        module, signatures = lower_cpu(source, context, options)
    with context:
        moved = constants.move_out(module, source, out, packed)
    bytecode = out / "module.mlirbc"
    with open(bytecode, "wb") as f:
        module.operation.write_bytecode(f)
    seconds = {"mlir": round(time.perf_counter() - t0, 4)}
    blob_bytes = (out / constants.BLOB_FILE).stat().st_size
    data = (assemble(constants.assembly(moved, blob_bytes), out / "constants.o"),) if moved else ()
    llvm_seconds, units = build_library(bytecode, out / LIBRARY, options.target, options.opt_level, data)
    seconds.update(llvm_seconds)
    manifest = {
        "format": FORMAT, "kind": "cpu", "library": LIBRARY, "library_digest": file_digest(out / LIBRARY),
        "needs": needed_libraries(out / LIBRARY), "target": dataclasses.asdict(options.target),
        "options": json.loads(options.to_json()),
        "functions": {name: sig.rules() for name, sig in signatures.items()},
        "tiled_ops": {name: [[dataclasses.asdict(uks), list(loops)] for uks, loops in sig.tiled_ops]
                      for name, sig in signatures.items()},
        "profile": profile.sites(module.operation),
        "amx": USES_AMX_ATTR in module.operation.attributes,
        "seconds": seconds, "units": units, "constant_bytes": sum(size for _, _, size, _ in moved),
    }
    if moved:
        manifest["constants"] = {**constants.region(blob_bytes), "digest": file_digest(out / constants.BLOB_FILE)}
    else:
        (out / constants.BLOB_FILE).unlink()
    for leftover in [out / "module.mlirbc", out / "module.ll", *out.glob("unit*"), out / "constants.s",
                     out / "constants.o"]:
        leftover.unlink(missing_ok=True)
    write_manifest(out, manifest)
    return manifest


def _load() -> None:
    """What every build imports (MLIR's bindings, the passes, LLVM's tools: ~1 s), for a spare."""
    from mlir import ir  # noqa: F401

    from ... import passes
    from ..lower import lower_cpu  # noqa: F401
    from . import constants, toolchain  # noqa: F401
    passes.REGISTRY  # noqa: B018  (loads every pass module)


if __name__ == "__main__":
    from .options import BuildOptions
    sys.exit(main(sys.argv[1:], build, BuildOptions.from_json, _load))
