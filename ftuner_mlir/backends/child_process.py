"""Child processes that never outlive the compile that started them, and scratch folders that never
outlive their process.

Every child (the compiler process, torch-mlir's import, the tools they run, tuning trials) starts in its
own process group with Linux's parent-death signal set: when the process that started it dies, even of
SIGKILL, the kernel kills it. An exception in the parent while it waits (KeyboardInterrupt, a timeout,
SystemExit) kills the child's whole group before it propagates. `terminate_cleanly()` turns a SIGTERM
during a compile into an exception, so the scratch folders go before the process dies of the signal.
Scratch folders carry their process id in their name; `scratch_dir` deletes those of dead processes
(what a SIGKILL left behind) when it makes a new one beside them.
"""
from __future__ import annotations

import contextlib
import ctypes
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

_PR_SET_PDEATHSIG = 1


def _in_child(parent: int, memory_mb: int | None):
    """What runs in the child between fork and exec: die with the parent, then the memory limit."""
    def apply() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:              # the parent died before the signal was armed
            os._exit(1)
        if memory_mb is not None:
            limit = memory_mb << 20
            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            if hard != resource.RLIM_INFINITY:
                limit = min(limit, hard)        # an enclosing limit (the tuner's) stays in force
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return apply


def start(cmd: list[str], memory_mb: int | None = None, **popen) -> subprocess.Popen:
    """Popen in a new process group that dies with this process; `memory_mb` limits its address space."""
    return subprocess.Popen(cmd, start_new_session=True, preexec_fn=_in_child(os.getpid(), memory_mb), **popen)


def kill_group(proc: subprocess.Popen, reap_later: bool = False) -> None:
    """The child and every tool it started, then reap it (`reap_later`: on a thread, not waiting for
    the kernel to free its memory)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if reap_later:
        threading.Thread(target=proc.communicate, daemon=True).start()
    else:
        proc.communicate()


def wait(proc: subprocess.Popen, timeout_s: float, input: str | None = None):
    """proc.communicate(input, timeout=...); on a timeout or any exception (KeyboardInterrupt,
    SystemExit) the child's group is killed first, then the exception goes on."""
    try:
        return proc.communicate(input, timeout=timeout_s)
    except BaseException:
        kill_group(proc)
        raise


# how run() and a Spare keep the child's output: both streams, as text
_CAPTURED = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True, "errors": "replace"}


def run(cmd: list[str], timeout_s: float, memory_mb: int | None = None, **popen) -> subprocess.CompletedProcess:
    """subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s) with a child that dies
    with this process (`popen` overrides those settings: stderr=subprocess.STDOUT merges the two);
    subprocess.TimeoutExpired past the limit, after the group was killed."""
    proc = start(cmd, memory_mb, stdin=subprocess.DEVNULL, **{**_CAPTURED, **popen})
    stdout, stderr = wait(proc, timeout_s)
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


SPARE = "--spare"          # a worker's only argument: load your modules, then read the job from stdin


class Spare:
    """A worker started ahead of its job: it loads its modules (torch, MLIR: seconds) while this
    process does other work, then reads its arguments as one JSON line from stdin. `close()` ends it
    unused (the job was found in a cache). Worker side: `spare_job()`."""

    def __init__(self, cmd: list[str], memory_mb: int | None = None, **popen):
        self.cmd = cmd
        self.proc = start([*cmd, SPARE], memory_mb, stdin=subprocess.PIPE, **{**_CAPTURED, **popen})

    def run(self, args: list[str], timeout_s: float) -> subprocess.CompletedProcess:
        """The job `args` (the worker's argv) run to its end, like `run([*cmd, *args], timeout_s)`."""
        proc, self.proc = self.proc, None
        if proc is None:
            raise RuntimeError("a spare worker runs one job")
        stdout, stderr = wait(proc, timeout_s, input=json.dumps(args) + "\n")
        return subprocess.CompletedProcess([*self.cmd, *args], proc.returncode, stdout, stderr)

    def close(self) -> None:
        """Kill it unused; it is reaped on a thread (the kernel takes ~0.2 s to free a half-loaded torch)."""
        if self.proc is not None:
            kill_group(self.proc, reap_later=True)
            self.proc = None


def spare_job(argv: list[str], load) -> list[str] | None:
    """In a worker: `argv` itself, or for a spare (argv == [SPARE]) `load()` run first, then the job's
    arguments read from stdin; None when the parent closed stdin without a job."""
    if argv != [SPARE]:
        return argv
    load()
    line = sys.stdin.readline()
    return json.loads(line) if line.strip() else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:                     # someone else's process: alive
        return True
    return True


def scratch_dir(prefix: str, parent: Path | str | None = None) -> Path:
    """A new private folder `<parent>/<prefix><pid>-XXXX` (parent: the temporary directory); folders of
    the same prefix whose process is gone are deleted first."""
    parent = Path(parent or tempfile.gettempdir())
    pattern = re.compile(re.escape(prefix) + r"(\d+)-")
    with contextlib.suppress(OSError):
        for old in parent.iterdir():
            match = pattern.match(old.name)
            if match and int(match.group(1)) != os.getpid() and not _alive(int(match.group(1))):
                shutil.rmtree(old, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=parent))


class _Terminated(BaseException):
    """SIGTERM arrived during a compile."""


@contextlib.contextmanager
def terminate_cleanly():
    """Within the block, SIGTERM unwinds the stack (children killed, scratch folders deleted), then the
    process dies of SIGTERM as it would have. Only where the default action was in force (a handler of
    the program's own is left alone) and on the main thread (signal handlers live there)."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def raise_terminated(signum, frame):
        raise _Terminated

    signal.signal(signal.SIGTERM, raise_terminated)
    try:
        yield
    except _Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        raise                                   # not reached: the default action ends the process
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
