"""`ftuner tune`: measure the best few analytic candidates once, each in a child process with time
and memory limits, and store the results in the tuning database."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import time

from ..backends import child_process
from ..hardware.cpu import CpuTarget
from ..ukernel.space import ranked_candidates
from ..tuning.db import TuningDB

MEMORY_LIMIT = 8 << 30      # bytes of address space for one candidate's process
TIME_LIMIT = 120            # seconds for one candidate


@dataclasses.dataclass
class Trial:
    mr: int
    nr: int
    analytic_rank: int
    gflops: float | None = None
    spread: float | None = None       # (max - min) / median of its rounds: how much to trust gflops
    error: str | None = None


def run_trial(target: CpuTarget, dtype: str, trial: Trial) -> Trial:
    config = json.dumps({"target": dataclasses.asdict(target), "dtype": dtype, "mr": trial.mr, "nr": trial.nr})
    try:
        proc = child_process.run([sys.executable, "-m", "ftuner_mlir.tuner.worker", config], TIME_LIMIT,
                                 memory_mb=MEMORY_LIMIT >> 20)
    except subprocess.TimeoutExpired:
        trial.error = f"timed out after {TIME_LIMIT} s"
        return trial
    if proc.returncode != 0:
        trial.error = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
        return trial
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    if result["max_rel_err"] > (1e-4 if dtype == "f32" else 1e-10):
        trial.error = f"wrong results (relative error {result['max_rel_err']:.1e})"
    else:
        trial.gflops, trial.spread = result["gflops"], result["spread"]
    return trial


def machine_busy(cores: int) -> str | None:
    """A warning when other work competes for the cores (the measurements would be low and noisy)."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return None
    if load > cores:
        return (f"the machine is busy (load average {load:.1f} on {cores} cores): measurements will be low "
                f"and noisy; the database keeps each tile's best measurement, so a noisy run does not demote one")
    return None


def _progress(done: int, total: int, label: str, started: float) -> None:
    width = 30
    filled = width * done // total
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {label:<24} "
                     f"{time.perf_counter() - started:5.1f} s")
    sys.stderr.flush()


def tune(target: CpuTarget, dtype: str = "f32", top: int = 6, db: TuningDB | None = None,
         progress: bool = True) -> list[Trial]:
    """Measure the `top` best analytic register tiles for the matmul family; record them; best first."""
    db = db or TuningDB()
    trials = [Trial(c.tile.mr, c.tile.nr, rank) for rank, c in enumerate(ranked_candidates(target, dtype)[:top])]
    started = time.perf_counter()
    for i, trial in enumerate(trials):
        if progress:
            _progress(i, len(trials), f"measuring {trial.mr}x{trial.nr}", started)
        run_trial(target, dtype, trial)
        if trial.gflops is not None:
            db.record(target, "matmul", dtype, trial.mr, trial.nr, trial.gflops, trial.analytic_rank)
    if progress:
        _progress(len(trials), len(trials), "done", started)
        sys.stderr.write("\n")
    return sorted(trials, key=lambda t: -(t.gflops or 0.0))
