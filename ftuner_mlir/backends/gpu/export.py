"""A GPU module as an exported folder: host code with the PTX embedded, the CUDA wrapper library, an
empty libLLVM.so stub, the manifest and the loader (see ftuner_mlir/export.py)."""
from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from ...runtime import libs
from ..cpu.toolchain import run_tool
from ..export_folder import copy_loader
from ..isolate import built
from ..worker import MANIFEST
from . import compile as gpu_compile
from .worker import HOST_CODE


def export(source: str, target, out: Path, name: str, options: dict) -> Path:
    """The host code comes from the compiler process (and the module cache), as compile() gets it."""
    library = f"lib{name}.so"
    with built(gpu_compile.request(source, target, **options)) as (folder, _), \
            tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        rules = json.loads((folder / MANIFEST).read_text())["functions"]
        run_tool([libs.tool("mlir-translate"), "--mlir-to-llvmir", str(folder / HOST_CODE), "-o", str(tmp / "host.ll")])
        run_tool([libs.tool("llc"), "-O3", "-filetype=obj", "-relocation-model=pic", str(tmp / "host.ll"),
              "-o", str(tmp / "host.o")])
        shutil.copy(libs.mlir_lib_dir() / "libmlir_cuda_runtime.so", out)
        (tmp / "stub.c").write_text("/* intentionally empty: see ftuner_mlir/export.py */\n")
        run_tool(["cc", "-shared", "-fPIC", "-o", str(out / "libLLVM.so"), "-Wl,-soname,libLLVM.so", str(tmp / "stub.c")])
        run_tool(["cc", "-shared", "-o", str(out / library), str(tmp / "host.o"), f"-L{out}", "-lmlir_cuda_runtime",
              "-Wl,-rpath,$ORIGIN"])
    copy_loader(out)
    (out / "module.json").write_text(json.dumps(
        {"kind": "gpu", "library": library, "target": json.loads(target.to_json()), "functions": rules}, indent=1))
    return out
