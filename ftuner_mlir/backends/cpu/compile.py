"""CPU modules: built by a child process (../isolate.py) into a native shared library, cached on disk
(../cache.py) and loaded with the runtime loader; `isolate=False` JITs them in this process with the
ExecutionEngine instead (for debugging: an MLIR assertion then ends this process)."""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from ... import settings
from ...errors import CompileError, InvalidOptions
from ...hardware.cpu import missing_host_features
from ...runtime import libs
from ...runtime.allocator import keep_freed_memory
from ...runtime.function import Function, packed_interface
from ...runtime.profiler import TAKE_PROFILE, Profiler, take_profile
from ...tuning.db import chosen_tile
from ...ukernel.space import UKernelSet
from .. import Source, text
from .. import cache as module_cache
from ..executable import Executable
from .options import BuildOptions
from .toolchain import cpu_identity


@dataclasses.dataclass(frozen=True)
class Request:
    """One compilation: the source, everything that decides its code, and the key naming the result."""
    source: Source
    options: BuildOptions
    key: str
    isolate: bool = True
    cache: bool | None = None
    timeout_s: float | None = None
    memory_mb: int | None = None

    @property
    def memo_key(self) -> str:
        """Within a process: the library and the in-process JIT of one module are different objects,
        and cache=False never returns a module an earlier call loaded from the cache."""
        return f"{self.key}/{self.isolate}/{self.cache is False}"


def request(source: Source, target, *, num_threads: int = 0, opt_level: int = 3, tile=None, tuning: bool = True,
            isolate: bool = True, cache: bool | None = None, timeout_s=None, memory_mb=None,
            profile: bool = False, matmul_precision: str = "f32", source_key: str | None = None) -> Request:
    from ..isolate import check_limits

    check_limits(timeout_s, memory_mb)
    mr, nr = tile or (0, 0)
    options = BuildOptions(target, num_threads, opt_level, mr, nr, tuning, profile, matmul_precision)
    tiles = [chosen_tile(target, dtype, mr, nr, tuning) for dtype in ("f32", "f64")]
    key = module_cache.key(source if source_key is None else source_key, options.to_json(), repr(tiles),
                           cpu_identity(target), _weights_digest(source) if source_key is None else "")
    return Request(source, options, key, isolate, cache, timeout_s, memory_mb)


def _weights_digest(source) -> str:
    """The digest of the file a module's text names for its weights (the text names it, not its bytes:
    the same text over other weights is another module); "" when it names none or the file is missing
    (the build then says so)."""
    from ..digest import file_digest
    from ..isolate import external_weights_file

    path = external_weights_file(source) if isinstance(source, str) else None
    try:
        return file_digest(path) if path else ""
    except OSError:
        return ""


def build(req: Request) -> Executable:
    _check_runs_here(req.options.target)
    if not req.isolate:
        return _compile_in_process(text(req.source), req.options)
    from ...runtime.loader import DamagedModule
    from ..isolate import built, discard

    for _ in range(2):
        with built(req) as (folder, origin):
            try:
                return _load(folder, origin)
            except DamagedModule as err:
                if origin != "cache":
                    raise CompileError(f"the compiler wrote a library its manifest does not describe: {err}") from None
        discard(folder)                      # a damaged cache entry: deleted, and built again
    raise CompileError(f"the module cache in {module_cache.root()} keeps returning damaged entries")


def _check_runs_here(target) -> None:
    """Code for a CPU this machine is not would stop the process with SIGILL at its first vector
    instruction: refuse before building. (`ftuner export` still cross-compiles object code for it.)"""
    missing = missing_host_features(target)
    if missing:
        raise InvalidOptions(f"target {target.name!r} ({target.isa}) needs CPU features this machine lacks "
                             f"({', '.join(missing)}): its code cannot run here. Compile for target='host', "
                             f"or export object code for it with `ftuner export --target {target.name}`")


def _tiled_ops(manifest: dict, name: str) -> tuple:
    return tuple((UKernelSet(**uks), tuple(loops)) for uks, loops in manifest["tiled_ops"].get(name, []))


def _configure_process() -> None:
    """Before a module is loaded: the OpenMP runtime's environment, glibc's reuse of freed memory."""
    settings.configure_openmp()
    if not settings.return_memory():
        keep_freed_memory()


def _load(folder: Path, origin: str) -> Executable:
    from ...runtime import loader

    _configure_process()
    module = loader.load(folder, libs.runtime_libraries(loader.needs(folder)))
    for name, fn in module.functions.items():
        fn.tiled_ops = _tiled_ops(module.metadata, name)
    return Executable((module,), dict(module.functions), origin=origin,
                      library=str(folder / module.metadata["library"]), profiler=module.profiler)


def _compile_in_process(source: str, options: BuildOptions) -> Executable:
    """The ExecutionEngine route: same lowering, JIT'd into this process."""
    if any(name.startswith("torch_mlir._mlir_libs") for name in sys.modules):
        # measured: the JIT'd Dense layer returned NaNs once torch_mlir.fx was imported
        raise CompileError("compile(..., isolate=False) cannot run in a process that has loaded torch-mlir's own "
                           "MLIR libraries (torch_mlir.fx): the two copies of MLIR clash and the JIT'd code "
                           "computes garbage; use the default isolate=True")
    from mlir import ir
    from mlir.execution_engine import ExecutionEngine

    from ...lowering.buffers import profile
    from ...ir.attributes import USES_AMX_ATTR
    from ...runtime.loader import request_amx_tile_state
    from ..lower import lower_cpu

    context = ir.Context()
    module, signatures = lower_cpu(source, context, options)
    _configure_process()
    if USES_AMX_ATTR in module.operation.attributes:
        request_amx_tile_state()
    openmp = options.threads() > 1 or options.profile          # profile mode reads omp_get_wtime
    shared = [libs.c_runner_utils()] + ([libs.openmp_runtime()] if openmp else [])
    llvm_dialect = str(module)
    try:
        engine = ExecutionEngine(module, opt_level=options.opt_level, shared_libs=shared)
    except RuntimeError as err:
        raise CompileError(f"the ExecutionEngine failed: {err}") from None
    functions = {}
    for name, sig in signatures.items():
        entry = packed_interface(engine.raw_lookup(f"_mlir_ciface_{name}"))
        functions[name] = Function(entry, sig.rules(), sig.tiled_ops, packed=True)
    sites = profile.sites(module.operation)
    profiler = Profiler(take_profile(engine.raw_lookup(TAKE_PROFILE), packed=True), sites) if sites else None
    return Executable((context, module, engine), functions, llvm_dialect, origin="in-process", profiler=profiler)
