"""GPU modules compiled in this process: host code JIT'd by the ExecutionEngine, kernels as PTX that
the CUDA driver loads. Arguments are CUDA tensors (see runtime/loader.py). Without a driver: a clear
error, before the CUDA wrapper library (which would abort the process when libcuda.so.1 is missing)
is loaded."""
from __future__ import annotations

import ctypes
import dataclasses

from ...errors import CompileError, InvalidOptions
from ...runtime import libs
from .. import cache as module_cache
from ..executable import Executable


@dataclasses.dataclass(frozen=True)
class Request:
    source: str
    target: object
    opt_level: int
    key: str

    @property
    def memo_key(self) -> str:
        return self.key


def request(source: str, target, *, opt_level: int = 3, profile: bool = False, **_cpu_only) -> Request:
    """CPU-only options (threads, tile, tuning, isolation, cache, limits) do not apply here."""
    if profile:
        raise InvalidOptions("profile=True is for CPU targets; GPU modules have no clocks yet")
    return Request(source, target, opt_level, module_cache.key(source, target.to_json(), f"gpu-O{opt_level}"))


def lowered(source: str, target, context):
    """The module in the LLVM dialect with the PTX embedded, and the public functions' signatures."""
    from ...passes import GpuPipeline
    from ..lower import lower

    select, *rest = GpuPipeline(target=target).stages()
    return lower(source, context, select, rest)


def build(req: Request) -> Executable:
    from mlir import ir
    from mlir.execution_engine import ExecutionEngine

    from ...runtime.loader import ExportedFunction, check_driver

    context = ir.Context()
    module, signatures = lowered(req.source, req.target, context)
    check_driver()
    try:
        engine = ExecutionEngine(module, opt_level=req.opt_level, shared_libs=[
            str(libs.mlir_lib_dir() / "libmlir_cuda_runtime.so"), libs.c_runner_utils()])
    except RuntimeError as err:
        raise CompileError(f"the ExecutionEngine failed: {err}") from None
    functions = {}
    for name, sig in signatures.items():
        # raw_lookup gives the engine's packed wrapper of the C interface (one void** argument)
        entry = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(engine.raw_lookup(f"_mlir_ciface_{name}"))
        functions[name] = ExportedFunction(entry, sig.rules(), packed=True)
    return Executable((context, module, engine), functions, str(module), origin="gpu")
