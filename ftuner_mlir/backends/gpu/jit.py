"""GPU modules compiled in this process: host code JIT'd by the ExecutionEngine, kernels as PTX that
the CUDA driver loads. Arguments are CUDA tensors (see runtime/loader.py). Without a driver: a clear
error, before the CUDA wrapper library (which would abort the process when libcuda.so.1 is missing)
is loaded."""
from __future__ import annotations

import ctypes

from ...errors import CompileError
from ...runtime import libs
from ..executable import Executable


def compile_gpu(source: str, target, opt_level: int) -> Executable:
    from mlir import ir
    from mlir.execution_engine import ExecutionEngine

    from ...passes import Bufferize, LowerGpu, SelectUKernels, Tile
    from ...runtime.loader import ExportedFunction, check_driver
    from ..lower import lower

    context = ir.Context()
    module, signatures = lower(source, context, SelectUKernels(target=target, tuning=False),
                               [Bufferize(target=target), Tile(target=target), LowerGpu(target=target)])
    check_driver()
    try:
        engine = ExecutionEngine(module, opt_level=opt_level, shared_libs=[
            str(libs.mlir_lib_dir() / "libmlir_cuda_runtime.so"), libs.c_runner_utils()])
    except RuntimeError as err:
        raise CompileError(f"the ExecutionEngine failed: {err}") from None
    functions = {}
    for name, sig in signatures.items():
        # raw_lookup gives the engine's packed wrapper of the C interface (one void** argument)
        entry = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(engine.raw_lookup(f"_mlir_ciface_{name}"))
        functions[name] = ExportedFunction(entry, sig.rules(), packed=True)
    return Executable((context, module, engine), functions, str(module), origin="gpu")
