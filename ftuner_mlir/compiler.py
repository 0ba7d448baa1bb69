"""`compile()`: MLIR text in, an Executable out. One compilation serves every shape.

CPU modules are compiled by a child process (backends/cpu/isolate.py) into a native shared library, cached
on disk (backends/cache.py) and loaded with the runtime loader; `isolate=False` compiles in this process
with the ExecutionEngine instead (for debugging: an MLIR assertion then ends this process). GPU modules
are compiled in this process (host code JIT'd, kernels as PTX for the CUDA driver).
"""
from __future__ import annotations

import contextlib
import sys
import tempfile
import threading
from pathlib import Path

from . import settings
from .backends import cache as module_cache
from .backends.cpu.options import BuildOptions
from .backends.cpu.toolchain import cpu_identity
from .backends.executable import Executable
from .errors import CompileError
from .hardware.cpu import CpuTarget
from .hardware.targets import parse_target
from .runtime import libs
from .runtime.function import Function, packed_interface
from .tuning.db import chosen_tile
from .ukernel.space import UKernelSet

__all__ = ["compile", "CompileError", "Executable"]

_memo: dict[str, Executable] = {}
_lock = threading.Lock()
compilations = 0          # how many modules this process has really compiled (tests watch it)
cache_loads = 0           # how many modules came from the on-disk cache


def compile(source: str, target: str | CpuTarget = "host", *, num_threads: int = 0, opt_level: int = 3,
            tile: tuple[int, int] | None = None, tuning: bool = True, isolate: bool = True,
            cache: bool | None = None, timeout_s: float | None = None, memory_mb: int | None = None) -> Executable:
    """Compile a module of `func.func`s on tensors (dynamic dims allowed). One compilation serves every
    shape.

    num_threads  threads of the generated code (0: the target's cores; 1: sequential)
    opt_level    LLVM -O level, 0..3
    tile         force the body uKernel (rows, cols); tuning=False ignores the tuning database
    isolate      compile in a child process (default) into a native library; False: in this process
    cache        read and write the on-disk module cache (default: on, unless FTUNER_NO_CACHE=1)
    timeout_s    the child's time limit (default 1800 s); memory_mb its address-space limit (default:
                 3/4 of the machine's memory). Past either, a CompileError names the limit.
    The same text, target and options return the same Executable within a process."""
    if not isinstance(source, str):
        raise TypeError(f"compile() takes MLIR text (str), got {type(source).__name__}")
    target = parse_target(target)
    if target.kind == "gpu":
        return _compile_gpu(source, target, opt_level)
    options, key = _options_and_key(source, target, num_threads, opt_level, tile, tuning)
    with _lock:
        memo_key = f"{key}/{isolate}"
        if memo_key not in _memo:
            if isolate:
                with built(source, options, key, cache, timeout_s, memory_mb) as (folder, origin):
                    _memo[memo_key] = _load(folder, origin)
            else:
                _memo[memo_key] = _compile_in_process(source, options)
        return _memo[memo_key]


def _options_and_key(source: str, target, num_threads, opt_level, tile, tuning) -> tuple[BuildOptions, str]:
    mr, nr = tile or (0, 0)
    options = BuildOptions(target, num_threads, opt_level, mr, nr, tuning)
    tiles = [chosen_tile(target, dtype, mr, nr, tuning) for dtype in ("f32", "f64")]
    return options, module_cache.key(source, options.to_json(), repr(tiles), cpu_identity(target))


@contextlib.contextmanager
def built(source: str, options: BuildOptions, key: str, cache: bool | None = None, timeout_s=None, memory_mb=None):
    """The folder of the compiled module (library + manifest) and where it came from ("cache" or
    "built"), for the duration of the `with`: a cache entry, or a temporary build when the cache is off."""
    global compilations, cache_loads
    from .backends.cpu.isolate import build_isolated, discard

    use_cache = settings.module_cache_enabled() if cache is None else cache
    if use_cache:
        found = module_cache.lookup(key)
        if found is not None:
            cache_loads += 1
            yield found, "cache"
            return
    build = module_cache.new_build_dir() if use_cache else Path(tempfile.mkdtemp(prefix="ftuner-build-"))
    try:
        build_isolated(source, options, build, timeout_s, memory_mb)
        compilations += 1
        yield (module_cache.publish(build, key) if use_cache else build), "built"
    finally:
        if build.exists():
            discard(build)        # a library stays mapped after its file goes


def build_folder_for_export(source: str, target, **kwargs):
    """`built(...)` for `ftuner export`: the same options and cache as compile()."""
    options, key = _options_and_key(source, target, kwargs.pop("num_threads", 0), kwargs.pop("opt_level", 3),
                                    kwargs.pop("tile", None), kwargs.pop("tuning", True))
    return built(source, options, key, **kwargs)


def _compile_gpu(source: str, target, opt_level: int) -> Executable:
    global compilations
    from .backends.gpu.jit import compile_gpu

    memo_key = module_cache.key(source, target.to_json(), f"gpu-O{opt_level}")
    with _lock:
        if memo_key not in _memo:
            _memo[memo_key] = compile_gpu(source, target, opt_level)
            compilations += 1
        return _memo[memo_key]


def _tiled_ops(manifest: dict, name: str) -> tuple:
    return tuple((UKernelSet(**uks), tuple(loops)) for uks, loops in manifest["tiled_ops"].get(name, []))


def _load(folder: Path, origin: str) -> Executable:
    from .runtime import loader

    settings.configure_openmp()
    module = loader.load(folder, libs.runtime_libraries(loader.needs(folder)))
    for name, fn in module.functions.items():
        fn.tiled_ops = _tiled_ops(module.metadata, name)
    return Executable((module,), dict(module.functions), origin=origin,
                      library=str(folder / module.metadata["library"]))


def _compile_in_process(source: str, options: BuildOptions) -> Executable:
    """The ExecutionEngine route: same lowering, JIT'd into this process."""
    global compilations
    if any(name.startswith("torch_mlir._mlir_libs") for name in sys.modules):
        # measured: the JIT'd Dense layer returned NaNs once torch_mlir.fx was imported
        raise CompileError("compile(..., isolate=False) cannot run in a process that has loaded torch-mlir's own "
                           "MLIR libraries (torch_mlir.fx): the two copies of MLIR clash and the JIT'd code "
                           "computes garbage; use the default isolate=True")
    from mlir import ir
    from mlir.execution_engine import ExecutionEngine

    from .backends.lower import lower_cpu

    context = ir.Context()
    module, signatures = lower_cpu(source, context, options)
    settings.configure_openmp()
    shared = [libs.c_runner_utils()] + ([libs.openmp_runtime()] if options.threads() > 1 else [])
    llvm_dialect = str(module)
    try:
        engine = ExecutionEngine(module, opt_level=options.opt_level, shared_libs=shared)
    except RuntimeError as err:
        raise CompileError(f"the ExecutionEngine failed: {err}") from None
    compilations += 1
    functions = {}
    for name, sig in signatures.items():
        entry = packed_interface(engine.raw_lookup(f"_mlir_ciface_{name}"))
        functions[name] = Function(entry, sig.rules(), sig.tiled_ops, packed=True)
    return Executable((context, module, engine), functions, llvm_dialect, origin="in-process")


