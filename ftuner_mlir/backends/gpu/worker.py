"""The GPU compiler process: `python -m ftuner_mlir.backends.gpu.worker REQUEST.json` (../worker.py).

Lowers the module to host code in the LLVM dialect with the kernels' PTX embedded (gpu.binary), and
writes it as bytecode with the manifest. The parent JITs that (gpu/compile.py): the part of the work
that can abort a process (the MLIR pipeline, NVPTX code generation) runs here.
"""
from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path

from ..digest import file_digest
from ..worker import main, write_manifest

HOST_CODE = "host.mlirbc"
FORMAT = 1


def build(source: str, options, out: Path) -> dict:
    from mlir import ir

    from .compile import lowered

    t0 = time.perf_counter()
    module, signatures = lowered(source, options.target, ir.Context())
    with open(out / HOST_CODE, "wb") as f:
        module.operation.write_bytecode(f)
    manifest = {
        "format": FORMAT, "kind": "gpu", "library": HOST_CODE, "library_digest": file_digest(out / HOST_CODE),
        "target": dataclasses.asdict(options.target), "options": json.loads(options.to_json()),
        "functions": {name: sig.rules() for name, sig in signatures.items()},
        "seconds": {"mlir": round(time.perf_counter() - t0, 4)},
    }
    write_manifest(out, manifest)
    return manifest


if __name__ == "__main__":
    from .options import GpuOptions
    sys.exit(main(sys.argv[1:], build, GpuOptions.from_json))
