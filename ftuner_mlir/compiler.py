"""`compile()`: MLIR text in, an Executable out. One compilation serves every shape.

The target's backend (backends/) does the work: CPU modules are built by a child process into a
cached native library, GPU modules are JIT'd in this process. Here: the public signature, and one
Executable per (text, target, options) within a process.
"""
from __future__ import annotations

import inspect
import threading

from .backends import Source, backend_for
from .backends.child_process import terminate_cleanly
from .backends.executable import Executable
from .errors import CompileError, InvalidOptions
from .hardware.cpu import CpuTarget
from .hardware.targets import parse_target

__all__ = ["compile", "check_options", "CompileError", "Executable"]

_memo: dict[str, Executable] = {}
_lock = threading.Lock()
compilations = 0          # how many modules this process has really compiled (tests watch it)
cache_loads = 0           # how many modules came from the on-disk cache


def compile(source: Source, target: str | CpuTarget = "host", *, num_threads: int = 0, opt_level: int = 3,
            tile: tuple[int, int] | None = None, tuning: bool = True, isolate: bool = True,
            cache: bool | None = None, timeout_s: float | None = None, memory_mb: int | None = None,
            profile: bool = False, matmul_precision: str = "f32", source_key: str | None = None) -> Executable:
    """Compile a module of `func.func`s on tensors (dynamic dims allowed). One compilation serves every
    shape.

    num_threads  threads of the generated code (0: the target's cores; 1: sequential)
    opt_level    LLVM -O level, 0..3
    tile         force the body uKernel (rows, cols); tuning=False ignores the tuning database
    isolate      compile in a child process (default) into a native library; False: in this process
    cache        read and write the on-disk module cache (default: on, unless FTUNER_NO_CACHE=1)
    timeout_s    the child's time limit (default 1800 s); memory_mb its address-space limit (default:
                 3/4 of the machine's memory). Past either, a CompileError names the limit.
    profile      time each op of the public functions by kind: `exe.profile(*arrays)` (CPU only)
    matmul_precision  "bf16": fp32 matmuls run on the CPU's bf16 matrix engine (AMX), operands rounded
                 to bf16, accumulation and results fp32; the rest of the program stays fp32. On a
                 target without AMX it changes nothing. (CPU only)
    source_key   a string that determines the text, keying the module in its place: `source` may then
                 be a callable producing the text, called only when neither this process nor the cache
                 has the module (the torch front end keys by the exported program, imports on a miss)
    GPU targets (`cuda:...`) take opt_level only. The same text, target and options return the same
    Executable within a process."""
    global compilations, cache_loads
    if not isinstance(source, str) and not (callable(source) and isinstance(source_key, str)):
        raise TypeError(f"compile() takes MLIR text (str), or a callable producing it with a source_key; got "
                        f"{type(source).__name__}")
    target = parse_target(target)
    backend = backend_for(target)
    request = backend.request(source, target, num_threads=num_threads, opt_level=opt_level, tile=tile,
                              tuning=tuning, isolate=isolate, cache=cache, timeout_s=timeout_s, memory_mb=memory_mb,
                              profile=profile, matmul_precision=matmul_precision, source_key=source_key)
    with _lock, terminate_cleanly():
        if request.memo_key not in _memo:
            executable = backend.build(request)
            if executable.origin == "cache":
                cache_loads += 1
            else:
                compilations += 1
            _memo[request.memo_key] = executable
        return _memo[request.memo_key]


def check_options(target: str | CpuTarget = "host", **options) -> None:
    """Raise InvalidOptions (a ValueError) for options compile() would refuse, before anything runs
    (the PyTorch front end calls it before exporting: a typo should not cost an export and an import)."""
    accepted = [name for name in inspect.signature(compile).parameters
                if name not in ("source", "target", "source_key")]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise InvalidOptions(f"unknown compile option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
                             f"the options are {', '.join(accepted)}")
    target = parse_target(target)
    backend_for(target).request("", target, **options)
