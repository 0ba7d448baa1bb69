"""A module in the LLVM dialect -> a position-independent shared library, with the LLVM tools the
wheels ship: mlir-translate (to LLVM IR), llvm-split (one unit per core), opt (the -O pipeline, as the
ExecutionEngine runs it), llc (machine code for the target's CPU), and the system linker
(`cc -shared`, or `ld -shared`).

The code is compiled for the target, not for whatever machine compiles it: `host` is this machine's
CPU as LLVM names it, the presets name an x86-64 micro-architecture level.
"""
from __future__ import annotations

import concurrent.futures
import functools
import hashlib
import os
import shutil
import subprocess
import time
from pathlib import Path

from ...errors import CompileError
from .. import child_process
from ...lowering.llvm.llvm_target import TRIPLE, host_cpu, llvm_cpu
from ...runtime import libs

@functools.cache
def cpu_identity(target) -> str:
    """What decides the machine code llc emits for `target`, cheaply (no tool run): for the host,
    the CPU model and flags /proc/cpuinfo reports; otherwise the micro-architecture level."""
    if target.name != "host":
        return llvm_cpu(target)
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
        proc = child_process.run(cmd, timeout_s)           # dies with the compiler process
    except subprocess.TimeoutExpired:
        raise CompileError(f"{Path(cmd[0]).name} did not finish in {timeout_s:.0f} s; reproduce with:\n  "
                           f"{' '.join(cmd)}") from None
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-20:])
        raise CompileError(f"{Path(cmd[0]).name} failed (exit {proc.returncode}); reproduce with:\n  "
                           f"{' '.join(cmd)}\n{tail}")


def jobs() -> int:
    """Compilation units built at once: the cores this process may run on."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def assemble(text: str, obj: Path) -> Path:
    """Assembly text (x86-64, GNU syntax) -> an object file, with the wheels' llvm-mc."""
    source = obj.with_suffix(".s")
    source.write_text(text)
    run_tool([libs.tool("llvm-mc"), f"-triple={TRIPLE}", "-filetype=obj", str(source), "-o", str(obj)])
    return obj


def build_library(bytecode: Path, library: Path, target, opt_level: int,
                  data_objects: tuple[Path, ...] = ()) -> tuple[dict[str, float], int]:
    """LLVM-dialect bytecode -> `library`, linked with `data_objects` (constants.py's room for the
    weights); (the seconds each step took, the number of compilation units). Intermediates stay next to
    it.

    The LLVM module is split by function into one unit per core (llvm-split keeps each function
    whole and promotes what units share), and the units go through opt and llc in parallel: the
    dispatch functions, the public functions and their glue compile side by side."""
    work = library.parent
    ll = work / "module.ll"
    cpu = f"-mcpu={llvm_cpu(target)}"
    seconds = {}

    def timed(name: str, fn) -> None:
        t0 = time.perf_counter()
        fn()
        seconds[name] = round(time.perf_counter() - t0, 4)

    timed("translate", lambda: run_tool([libs.tool("mlir-translate"), "--mlir-to-llvmir", str(bytecode),
                                         "-o", str(ll)]))
    units = [ll]
    if jobs() > 1:
        timed("split", lambda: run_tool([libs.tool("llvm-split"), f"-j{jobs()}", "-o", str(work / "unit"),
                                         str(ll)]))
        units = sorted(work.glob("unit[0-9]*"))

    def compile_unit(unit: Path) -> Path:
        optimized, obj = unit.with_name(unit.name + ".opt.bc"), unit.with_name(unit.name + ".o")
        run_tool([libs.tool("opt"), f"-O{opt_level}", f"-mtriple={TRIPLE}", cpu, str(unit), "-o", str(optimized)])
        run_tool([libs.tool("llc"), f"-O{opt_level}", f"-mtriple={TRIPLE}", cpu, "-relocation-model=pic",
                  "-filetype=obj", str(optimized), "-o", str(obj)])
        return obj

    objects: list[Path] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(units)) as pool:
        timed("opt+llc", lambda: objects.extend(pool.map(compile_unit, units)))
    # -lm: math ops without an LLVM lowering (math.erf, ...) are libm calls (convert-math-to-libm)
    timed("link", lambda: run_tool(linker() + ["-o", str(library), *map(str, objects + list(data_objects)), "-lm"]))
    return seconds, len(units)
