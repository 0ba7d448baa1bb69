"""Run a backend's compiler process (worker.py) with a time and a memory limit, and turn every way it
can end into a result or a CompileError: no input can end the caller's process. `built(request)` adds
the module cache around it.

A failure keeps its input: the MLIR text and the target go into `<cache dir>/failures/<id>/`, and the
error ends with a ready-to-paste `ftuner-opt` command that runs the same pipeline on them.

The options a backend passes (cpu/options.py, gpu/options.py) have `target`, `to_json()`,
`pipeline_text()`, `target_argument(path)` (the --target value naming a saved target file) and
`worker` (the module the child runs).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from .. import settings
from ..errors import CompileError, InvalidOptions
from . import cache as module_cache, worker

DEFAULT_TIMEOUT_S = 1800.0
# how running out of address space shows in the child's output (C++, the dynamic loader, Python)
_OUT_OF_MEMORY = ("bad_alloc", "failed to map segment", "Cannot allocate memory", "MemoryError", "out of memory")


def default_memory_mb() -> int:
    """Three quarters of the machine's memory: enough for any real model, and the machine survives."""
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        return max(1024, pages * size * 3 // 4 >> 20)
    except (ValueError, OSError):
        return 16 << 10


def _limit_memory(memory_mb: int):
    def apply() -> None:        # runs in the child between fork and exec
        limit = memory_mb << 20
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)              # an enclosing limit (the tuner's) stays in force
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return apply


def _tail(text: str, lines: int = 25) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def save_reproducer(source: str, options) -> str:
    """Keep the input and the target; return the ftuner-opt command that replays the pipeline."""
    ident = hashlib.sha256((source + options.to_json()).encode()).hexdigest()[:16]
    folder = settings.cache_dir() / "failures" / ident
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "input.mlir").write_text(source)
        (folder / "target.json").write_text(options.target.to_json())
    except OSError as err:
        return f"(could not save a reproducer: {err})"
    pipeline = shlex.quote(f"--pass-pipeline={options.pipeline_text()}")
    target = shlex.quote(f"--target={options.target_argument(folder / 'target.json')}")
    return (f"reproduce with:\n  ftuner-opt {target} {pipeline} "
            f"{shlex.quote(str(folder / 'input.mlir'))}")


def _death(returncode: int, output: str, memory_mb: int) -> str:
    if returncode < 0:
        sig = signal.Signals(-returncode).name
        why = {"SIGABRT": "an MLIR assertion or LLVM fatal error", "SIGSEGV": "a crash inside MLIR/LLVM",
               "SIGKILL": "killed from outside, most likely out of memory"}.get(sig, "a signal")
        head = f"the compiler process died of {sig} ({why})"
    else:
        head = f"the compiler process exited with status {returncode}"
    if returncode == worker.OUT_OF_MEMORY_STATUS or any(sign in output for sign in _OUT_OF_MEMORY):
        head += f"; it ran out of memory under the limit of {memory_mb} MB (compile(..., memory_mb=...))"
    return head


def build_isolated(source: str, options, out: Path, timeout_s: float | None = None,
                   memory_mb: int | None = None) -> dict:
    """Build `source` into the folder `out` in a child process; the manifest, or a CompileError."""
    timeout_s = DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s
    memory_mb = default_memory_mb() if memory_mb is None else memory_mb
    if not timeout_s > 0 or not memory_mb > 0:
        raise InvalidOptions(f"timeout_s and memory_mb must be positive, got {timeout_s!r} and {memory_mb!r}")
    out.mkdir(parents=True, exist_ok=True)
    (out / "input.mlir").write_text(source)
    request = {"source_file": str(out / "input.mlir"), "options": options.to_json(), "out_dir": str(out)}
    (out / "request.json").write_text(json.dumps(request))
    cmd = [sys.executable, "-m", options.worker, str(out / "request.json")]
    root = str(Path(__file__).resolve().parents[2])            # this very package comes first
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            text=True, errors="replace", env=env, start_new_session=True,
                            preexec_fn=_limit_memory(memory_mb))
    try:
        output, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)          # the child and the tools it started
        proc.communicate()
        raise CompileError(f"compilation exceeded the time limit of {timeout_s:g} s (compile(..., timeout_s=...))"
                           f"\n{save_reproducer(source, options)}") from None
    if proc.returncode == 0 and (out / worker.MANIFEST).exists():
        return json.loads((out / worker.MANIFEST).read_text())
    error = out / worker.ERROR
    if proc.returncode == 1 and error.exists():
        message = error.read_text()
    else:
        message = _death(proc.returncode, output, memory_mb)
        if output.strip():
            message += f"; its last output:\n{_tail(output)}"
    raise CompileError(f"{message}\n{save_reproducer(source, options)}")


def discard(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def built(req):
    """The folder of the compiled module (product + manifest) and where it came from ("cache" or
    "built"), for the duration of the `with`: a cache entry, or a temporary build when the cache is off.
    `req` has source, options, key, cache, timeout_s and memory_mb."""
    use_cache = settings.module_cache_enabled() if req.cache is None else req.cache
    if use_cache:
        found = module_cache.lookup(req.key)
        if found is not None:
            yield found, "cache"
            return
    folder = module_cache.new_build_dir() if use_cache else Path(tempfile.mkdtemp(prefix="ftuner-build-"))
    try:
        build_isolated(req.source, req.options, folder, req.timeout_s, req.memory_mb)
        yield (module_cache.publish(folder, req.key) if use_cache else folder), "built"
    finally:
        if folder.exists():
            discard(folder)        # a library stays mapped after its file goes
