"""A module in the LLVM dialect -> a position-independent shared library, with the LLVM tools the
wheels ship: mlir-translate (to LLVM IR), opt (the -O pipeline, as the ExecutionEngine runs it), llc
(machine code for the target's CPU), and the system linker (`cc -shared`, or `ld -shared`).

The code is compiled for the target, not for whatever machine compiles it: `host` is this machine's
CPU as LLVM names it, the presets name an x86-64 micro-architecture level.
"""
from __future__ import annotations

import functools
import hashlib
import re
import shutil
import subprocess
import time
from pathlib import Path

from ..errors import CompileError
from ..runtime import libs

TRIPLE = "x86_64-unknown-linux-gnu"
ISA_LEVEL = {"avx512": "x86-64-v4", "avx2": "x86-64-v3", "sse": "x86-64-v2"}


@functools.cache
def host_cpu() -> str:
    """This machine's CPU as LLVM names it (`llc --version` says 'Host CPU: sapphirerapids')."""
    out = subprocess.run([libs.tool("llc"), "--version"], capture_output=True, text=True, timeout=60).stdout
    m = re.search(r"Host CPU:\s*(\S+)", out)
    return m.group(1) if m else "native"


def llvm_cpu(target) -> str:
    return host_cpu() if target.name == "host" else ISA_LEVEL[target.isa]


@functools.cache
def cpu_identity(target) -> str:
    """What decides the machine code llc emits for `target`, cheaply (no tool run): for the host,
    the CPU model and flags /proc/cpuinfo reports; otherwise the micro-architecture level."""
    if target.name != "host":
        return ISA_LEVEL[target.isa]
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return "host:" + host_cpu()
    wanted = [ln for ln in lines if ln.startswith(("vendor_id", "cpu family", "model", "flags"))]
    return "host:" + hashlib.sha256("\n".join(sorted(set(wanted))).encode()).hexdigest()[:16]


@functools.cache
def linker() -> list[str]:
    for name in ("cc", "gcc", "clang", "ld"):
        path = shutil.which(name)
        if path:
            return [path, "-shared"] + (["-Wl,-z,noexecstack"] if name != "ld" else ["-z", "noexecstack"])
    raise CompileError("no linker found: building a native library needs a C compiler (cc) or ld on PATH "
                       "(Debian: apt-get install gcc)")


def run_tool(cmd: list[str], timeout_s: float = 3600) -> None:
    """Run one tool; a failure is a CompileError with the command to reproduce it and its output."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise CompileError(f"{Path(cmd[0]).name} did not finish in {timeout_s:.0f} s; reproduce with:\n  "
                           f"{' '.join(cmd)}") from None
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-20:])
        raise CompileError(f"{Path(cmd[0]).name} failed (exit {proc.returncode}); reproduce with:\n  "
                           f"{' '.join(cmd)}\n{tail}")


def build_library(bytecode: Path, library: Path, target, opt_level: int) -> dict[str, float]:
    """LLVM-dialect bytecode -> `library`; the seconds each step took. Intermediates stay next to it."""
    work = library.parent
    ll, bc, obj = work / "module.ll", work / "module.bc", work / "module.o"
    cpu = f"-mcpu={llvm_cpu(target)}"
    steps = [
        ("translate", [libs.tool("mlir-translate"), "--mlir-to-llvmir", str(bytecode), "-o", str(ll)]),
        ("opt", [libs.tool("opt"), f"-O{opt_level}", f"-mtriple={TRIPLE}", cpu, str(ll), "-o", str(bc)]),
        ("llc", [libs.tool("llc"), f"-O{opt_level}", f"-mtriple={TRIPLE}", cpu, "-relocation-model=pic",
                 "-filetype=obj", str(bc), "-o", str(obj)]),
        ("link", linker() + ["-o", str(library), str(obj)]),
    ]
    seconds = {}
    for name, cmd in steps:
        t0 = time.perf_counter()
        run_tool(cmd)
        seconds[name] = time.perf_counter() - t0
    return seconds
