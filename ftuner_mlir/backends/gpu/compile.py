"""GPU modules: lowered by a child process (../isolate.py, worker.py) to host code with the kernels' PTX
embedded, cached on disk like CPU modules; the host code is JIT'd here by the ExecutionEngine and the
CUDA driver loads the PTX. `isolate=False` lowers in this process (an MLIR assertion then ends it).
Arguments are CUDA tensors (see runtime/loader.py). Without a driver: a clear error, before the CUDA
wrapper library (which would abort the process when libcuda.so.1 is missing) is loaded."""
from __future__ import annotations

import ctypes
import dataclasses
import json

from ...errors import CompileError
from ...runtime import libs
from .. import Source, text
from .. import cache as module_cache
from ..executable import Executable
from .options import GpuOptions


@dataclasses.dataclass(frozen=True)
class Request:
    source: Source
    options: GpuOptions
    key: str
    isolate: bool = True
    cache: bool | None = None
    timeout_s: float | None = None
    memory_mb: int | None = None

    @property
    def memo_key(self) -> str:
        return f"{self.key}/{self.isolate}/{self.cache is False}"


def request(source: Source, target, *, opt_level: int = 3, isolate: bool = True, cache: bool | None = None,
            timeout_s=None, memory_mb=None, profile: bool = False, source_key: str | None = None,
            **_cpu_only) -> Request:
    """CPU-only options (threads, tile, tuning) do not apply here."""
    from ...errors import InvalidOptions
    from ...ukernel.gpu_space import select_gpu
    from ..isolate import check_limits

    check_limits(timeout_s, memory_mb)
    if profile:
        raise InvalidOptions("profile=True is for CPU targets; GPU modules have no clocks yet")
    try:
        select_gpu(target, "matmul")          # a target no tile fits is refused here, not in the child
    except ValueError as err:
        raise InvalidOptions(str(err)) from None
    options = GpuOptions(target, opt_level)
    return Request(source, options, module_cache.key(source if source_key is None else source_key,
                                                     options.to_json(), "gpu"), isolate, cache,
                   timeout_s, memory_mb)


def lowered(source: str, target, context):
    """The module in the LLVM dialect with the PTX embedded, and the public functions' signatures."""
    from ..lower import lower

    select, *rest = GpuOptions(target).stages()
    return lower(source, context, select, rest)


def build(req: Request) -> Executable:
    from mlir import ir

    from ...runtime.loader import check_driver

    check_driver()                # before minutes of compiling for a machine that cannot run the result
    if not req.isolate:
        context = ir.Context()
        module, signatures = lowered(text(req.source), req.options.target, context)
        return _jit(context, module, {name: sig.rules() for name, sig in signatures.items()}, req.options,
                    "in-process")
    from ..isolate import built
    from ..worker import MANIFEST
    from .worker import HOST_CODE

    with built(req) as (folder, origin):
        manifest = json.loads((folder / MANIFEST).read_text())
        context = ir.Context()
        module = ir.Module.parse((folder / HOST_CODE).read_bytes(), context)
    return _jit(context, module, manifest["functions"], req.options, origin)


def _jit(context, module, rules: dict, options: GpuOptions, origin: str) -> Executable:
    from mlir.execution_engine import ExecutionEngine

    from ...runtime.loader import ExportedFunction

    llvm_dialect = str(module)
    try:
        engine = ExecutionEngine(module, opt_level=options.opt_level, shared_libs=[
            str(libs.mlir_lib_dir() / "libmlir_cuda_runtime.so"), libs.c_runner_utils()])
    except RuntimeError as err:
        raise CompileError(f"the ExecutionEngine failed: {err}") from None
    functions = {}
    for name, fn_rules in rules.items():
        # raw_lookup gives the engine's packed wrapper of the C interface (one void** argument)
        entry = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(engine.raw_lookup(f"_mlir_ciface_{name}"))
        functions[name] = ExportedFunction(entry, fn_rules, packed=True)
    return Executable((context, module, engine), functions, llvm_dialect, origin=origin)
