"""`compile()`: MLIR text in, an Executable out. One compilation serves every shape."""
from __future__ import annotations

import hashlib
import threading

from mlir import ir
from mlir.execution_engine import ExecutionEngine

from . import driver, settings
from .hardware.cpu import CpuTarget, parse_target
from .passes import LowerCpu, PassFailure, SelectUKernels, Tile
from .runtime import libs
from .runtime.executable import Executable, Function
from .runtime.signature import analyze

__all__ = ["compile", "CompileError", "Executable"]


class CompileError(Exception):
    """The module could not be compiled; the message holds MLIR-style diagnostics."""


_cache: dict[str, Executable] = {}
_lock = threading.Lock()
compilations = 0          # how many modules this process has really compiled (tests watch it)


def _key(source: str, target: CpuTarget, select: SelectUKernels, num_threads: int, opt_level: int) -> str:
    """Everything that changes the generated code, the tiles from the tuning database included."""
    tiles = [select.tile_for(target, dtype) for dtype in ("f32", "f64")]
    h = hashlib.sha256()
    for part in (source, target.to_json(), str(tiles), str(num_threads), str(opt_level)):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def compile(source: str, target: str | CpuTarget = "host", *, num_threads: int = 0, opt_level: int = 3,
            tile: tuple[int, int] | None = None, tuning: bool = True) -> Executable:
    """Compile a module of `func.func`s on tensors (dynamic dims allowed). One compilation serves every
    shape. `tile` forces the body uKernel (rows, cols); `tuning=False` ignores the tuning database.
    Cached per process: the same text, target and options return the same Executable."""
    target = parse_target(target)
    mr, nr = tile or (0, 0)
    select = SelectUKernels(target=target, mr=mr, nr=nr, tuning=tuning and target.kind == "cpu")
    key = _key(source, target, select, num_threads, opt_level)
    with _lock:
        if key not in _cache:
            _cache[key] = _compile(source, target, select, num_threads, opt_level)
        return _cache[key]


def _compile(source: str, target, select: SelectUKernels, num_threads: int, opt_level: int):
    if target.kind == "gpu":
        return _compile_gpu(source, target, select, opt_level)
    return _compile_cpu(source, target, select, num_threads, opt_level)


def _lower(source: str, context: ir.Context, select: SelectUKernels, stages: list):
    """Parse, select, read the signatures (tensor level), run the rest: (module, signatures)."""
    try:
        module = ir.Module.parse(source, context)
        driver.run_pipeline(module, [select])
        signatures = analyze(module.operation)
        if not signatures:
            raise CompileError("the module has no public func.func with a body to compile")
        driver.run_pipeline(module, stages)
    except ir.MLIRError as err:
        raise CompileError(driver.format_mlir_error(err)) from None
    except PassFailure as err:
        raise CompileError(f"{driver.format_location(err.location)}: error: {err.message}") from None
    return module, signatures


def _compile_gpu(source: str, target, select: SelectUKernels, opt_level: int) -> Executable:
    """Host code JIT'd by the ExecutionEngine, kernels as PTX loaded by the CUDA driver. Arguments are
    CUDA tensors (see runtime/loader.py). Without a driver: a clear error, before the CUDA wrapper
    library (which would abort the process when libcuda.so.1 is missing) is loaded."""
    import ctypes

    from .passes import Bufferize, LowerGpu
    from .runtime.loader import ExportedFunction, check_driver

    global compilations
    context = ir.Context()
    module, signatures = _lower(source, context, select,
                                [Bufferize(target=target), Tile(target=target), LowerGpu(target=target)])
    check_driver()
    engine = ExecutionEngine(module, opt_level=opt_level,
                             shared_libs=[str(libs.mlir_lib_dir() / "libmlir_cuda_runtime.so"), libs.c_runner_utils()])
    compilations += 1
    functions = {}
    for name, sig in signatures.items():
        n = len(sig.args) + len(sig.results)
        entry = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * n)(engine.raw_lookup(f"_mlir_ciface_{name}"))
        functions[name] = ExportedFunction(entry, sig.rules())
    return Executable((context, module, engine), functions, str(module))


def _compile_cpu(source: str, target: CpuTarget, select: SelectUKernels, num_threads: int,
                 opt_level: int) -> Executable:
    global compilations
    context = ir.Context()
    lower = LowerCpu(target=target, num_threads=num_threads)
    module, signatures = _lower(source, context, select, [Tile(target=target), lower])
    settings.configure_openmp()
    shared = [libs.c_runner_utils()] + ([libs.openmp_runtime()] if lower.threads() > 1 else [])
    engine = ExecutionEngine(module, opt_level=opt_level, shared_libs=shared)
    compilations += 1
    functions = {name: Function(engine, sig) for name, sig in signatures.items()}
    return Executable((context, module, engine), functions, str(module))
