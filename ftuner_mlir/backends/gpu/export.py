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
from .compile import lowered


def export(source: str, target, out: Path, name: str, options: dict) -> Path:
    from mlir import ir

    module, signatures = lowered(source, target, ir.Context())
    rules = {n: sig.rules() for n, sig in signatures.items()}
    llvm_dialect = str(module)
    library = f"lib{name}.so"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "host.mlir").write_text(llvm_dialect)
        run_tool([libs.tool("mlir-translate"), "--mlir-to-llvmir", str(tmp / "host.mlir"), "-o", str(tmp / "host.ll")])
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
