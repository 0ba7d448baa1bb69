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
import errno
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

from .. import settings
from ..errors import CompileError, InvalidOptions
from ..ir.attributes import EXTERNAL_WEIGHTS_ATTR
from . import cache as module_cache, child_process, text, worker

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


def _tail(text: str, lines: int = 25) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def save_reproducer(source: str, options) -> str:
    """Keep the input and the target; return the ftuner-opt command that replays the pipeline."""
    ident = hashlib.sha256((source + options.to_json()).encode()).hexdigest()[:16]
    folder = settings.cache_dir() / "failures" / ident
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "input.mlir").write_text(_with_own_weights(source, folder))
        (folder / "target.json").write_text(options.target.to_json())
    except OSError as err:
        return f"(could not save a reproducer: {err})"
    pipeline = shlex.quote(f"--pass-pipeline={options.pipeline_text()}")
    target = shlex.quote(f"--target={options.target_argument(folder / 'target.json')}")
    return (f"reproduce with:\n  ftuner-opt {target} {pipeline} "
            f"{shlex.quote(str(folder / 'input.mlir'))}")


_WEIGHTS_FILE = re.compile(re.escape(EXTERNAL_WEIGHTS_ATTR) + r' = \{file = "([^"\\]*)"')


def external_weights_file(source: str) -> str | None:
    """The file a module's weights live in (ir/weights.py), when its text names one."""
    found = _WEIGHTS_FILE.search(source)
    return found.group(1) if found else None


def _with_own_weights(source: str, folder: Path) -> str:
    """A module whose weights live in a file (ir/weights.py; the torch front end's, removed after the
    compile) gets its own copy beside the reproducer (a hard link where the disk allows), named in it."""
    found = _WEIGHTS_FILE.search(source)
    if found is None:
        return source
    kept = folder / "weights.bin"
    kept.unlink(missing_ok=True)
    try:
        os.link(found.group(1), kept)
    except OSError:
        shutil.copyfile(found.group(1), kept)
    return source[:found.start(1)] + str(kept) + source[found.end(1):]


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


MAX_MEMORY_MB = 1 << 40          # what RLIMIT_AS can express, in MB


def check_limits(timeout_s, memory_mb) -> None:
    """The child's limits, checked before anything starts (a bad value would fail inside the forked
    child, or not limit at all): timeout_s a positive finite number of seconds, memory_mb a whole
    number of megabytes from 1 to MAX_MEMORY_MB; None for the defaults."""
    numbers = (int, float)
    if timeout_s is not None and (isinstance(timeout_s, bool) or not isinstance(timeout_s, numbers)
                                  or not 0 < timeout_s < float("inf")):
        raise InvalidOptions(f"timeout_s and memory_mb must be positive: timeout_s is a number of seconds "
                             f"above 0, got {timeout_s!r}")
    if memory_mb is not None and (isinstance(memory_mb, bool) or not isinstance(memory_mb, int)
                                  or not 0 < memory_mb <= MAX_MEMORY_MB):
        raise InvalidOptions(f"timeout_s and memory_mb must be positive: memory_mb is a whole number of "
                             f"megabytes from 1 to {MAX_MEMORY_MB}, got {memory_mb!r}")


def _worker_command(options) -> tuple[list[str], dict]:
    """The compiler child's command line (without its request) and Popen settings: this package first
    on its path, its stderr merged into stdout."""
    root = str(Path(__file__).resolve().parents[2])            # this very package comes first
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    return [sys.executable, "-P", "-m", options.worker], {"env": env, "stderr": subprocess.STDOUT}  # -P: not the cwd first


def spare_compiler(options, memory_mb: int | None = None) -> child_process.Spare:
    """A compiler child started ahead of its request, loading MLIR and the passes (~1 s) while this
    process produces the text (build_isolated(..., spare=) hands it the request)."""
    cmd, popen = _worker_command(options)
    return child_process.Spare(cmd, default_memory_mb() if memory_mb is None else memory_mb, **popen)


def build_isolated(source: str, options, out: Path, timeout_s: float | None = None,
                   memory_mb: int | None = None, spare: child_process.Spare | None = None) -> dict:
    """Build `source` into the folder `out` in a child process (`spare`, one spare_compiler started with
    the same options and memory_mb, or a new one); the manifest, or a CompileError."""
    check_limits(timeout_s, memory_mb)
    timeout_s = DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s
    memory_mb = default_memory_mb() if memory_mb is None else memory_mb
    request = {"source_file": str(out / "input.mlir"), "options": options.to_json(), "out_dir": str(out)}
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / "input.mlir").write_text(source)
        (out / "request.json").write_text(json.dumps(request))
    except OSError as err:
        raise UnwritableFolder(out, err) from None
    try:
        if spare is not None:
            proc = spare.run([str(out / "request.json")], timeout_s)
        else:
            cmd, popen = _worker_command(options)
            proc = child_process.run([*cmd, str(out / "request.json")], timeout_s, memory_mb, **popen)
        output = proc.stdout           # stderr goes there too
    except subprocess.TimeoutExpired:
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
    _check_room(out, message)
    raise CompileError(f"{message}\n{save_reproducer(source, options)}")


# what a tool that could not write its output says (strerror of ENOSPC, EDQUOT, EROFS)
_NO_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EROFS)


def _check_room(out: Path, message: str) -> None:
    """The child writes only into `out`: a write error there is the folder's fault, not the module's."""
    for code in _NO_ROOM:
        if os.strerror(code) in message:
            raise UnwritableFolder(out, OSError(code, os.strerror(code)))


def discard(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


class UnwritableFolder(CompileError):
    """A folder the compile writes into refused the write (read-only, full, gone)."""

    def __init__(self, folder: Path, err: OSError):
        super().__init__(f"cannot write into {folder}: {err.strerror or err}")
        self.folder = folder


@contextlib.contextmanager
def built(req):
    """The folder of the compiled module (product + manifest) and where it came from ("cache" or
    "built"), for the duration of the `with`: a cache entry, or a temporary build when the cache is off.
    A cache folder that cannot be written is a warning and an uncached build; a temporary directory
    that cannot be written, a CompileError naming it. `req` has source, options, key, cache, timeout_s
    and memory_mb."""
    use_cache = settings.module_cache_enabled() if req.cache is None else req.cache
    if use_cache:
        found = module_cache.lookup(req.key)
        if found is not None:
            yield found, "cache"
            return
        folder = _build_in_cache(req)
        use_cache = folder is not None
    if not use_cache:
        folder = _temporary_build_dir()
        _build_or_discard(req, folder)
    try:
        yield _published(folder, req.key) if use_cache else folder, "built"
    finally:
        if folder.exists():
            discard(folder)        # a library stays mapped after its file goes


def _build_or_discard(req, folder: Path) -> None:
    # a callable source takes seconds to produce (torch-mlir's import): the compiler loads meanwhile
    spare = spare_compiler(req.options, req.memory_mb) if callable(req.source) else None
    try:
        build_isolated(text(req.source), req.options, folder, req.timeout_s, req.memory_mb, spare)
    except BaseException:
        discard(folder)
        raise
    finally:
        if spare is not None:
            spare.close()                   # unused when producing the text failed


def _build_in_cache(req) -> Path | None:
    """The build in a folder of the cache, or None (and a warning) when the cache cannot be written."""
    try:
        folder = module_cache.new_build_dir()
        _build_or_discard(req, folder)
    except (OSError, UnwritableFolder) as err:
        _without_cache(err)
        return None
    return folder


def _without_cache(err: Exception) -> None:
    warnings.warn(f"the module cache in {module_cache.root()} cannot be written ({err}); building without "
                  f"it (set FTUNER_CACHE_DIR to a writable folder, or FTUNER_NO_CACHE=1)", RuntimeWarning,
                  stacklevel=4)


def _temporary_build_dir() -> Path:
    try:
        return child_process.scratch_dir("ftuner-build-")
    except OSError as err:
        raise CompileError(f"cannot create a build folder in the temporary directory {tempfile.gettempdir()}: "
                           f"{err.strerror or err} (set TMPDIR to a writable folder)") from None


def _published(folder: Path, key: str) -> Path:
    """The build moved into the cache; if the cache cannot take it, the build folder itself (used once)."""
    try:
        return module_cache.publish(folder, key)
    except OSError as err:
        _without_cache(err)
        return folder
