"""The tuning database: one SQLite file (standard library), keyed by target, op family and dtype.

The register tile is a property of the uKernel, and every matmul-family op (plain, batched, transposed
B) runs the same 2D uKernels, so one measurement per (target, "matmul", dtype) serves the family.
"""
from __future__ import annotations

import datetime
import hashlib
import sqlite3
import warnings
from pathlib import Path

from .. import settings
from ..hardware.cpu import CpuTarget

class TuningDatabaseWarning(UserWarning):
    """The tuning database could not be used; compilation goes on with the analytic choice."""


SCHEMA = """
CREATE TABLE IF NOT EXISTS measurements (
    target_key TEXT NOT NULL, target TEXT NOT NULL, family TEXT NOT NULL, dtype TEXT NOT NULL,
    mr INTEGER NOT NULL, nr INTEGER NOT NULL, gflops REAL NOT NULL, analytic_rank INTEGER NOT NULL,
    measured_at TEXT NOT NULL,
    PRIMARY KEY (target_key, family, dtype, mr, nr)
)"""


def target_key(target: CpuTarget) -> str:
    return hashlib.sha256(target.to_json().encode()).hexdigest()[:16]


def default_path() -> Path:
    return settings.cache_dir() / "tuning.sqlite"


class TuningDB:
    def __init__(self, path: Path | str | None = None):
        self.path = Path(path) if path else default_path()

    def _connect(self, create: bool) -> sqlite3.Connection | None:
        if not create and not self.path.exists():
            return None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # a reader (every compile) waits for a locked database 1 s at most, then warns and goes on
        conn = sqlite3.connect(self.path, timeout=30 if create else 1)
        conn.execute(SCHEMA)
        return conn

    def record(self, target: CpuTarget, family: str, dtype: str, mr: int, nr: int, gflops: float,
               analytic_rank: int) -> None:
        conn = self._connect(create=True)
        with conn:
            # a tile keeps its best measurement: a run on a busier machine never demotes it
            conn.execute("INSERT INTO measurements VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                         "ON CONFLICT (target_key, family, dtype, mr, nr) DO UPDATE SET "
                         "gflops = MAX(gflops, excluded.gflops), analytic_rank = excluded.analytic_rank, "
                         "measured_at = excluded.measured_at",
                         (target_key(target), target.name, family, dtype, mr, nr, gflops, analytic_rank,
                          datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")))
        conn.close()

    def measurements(self, target: CpuTarget, family: str, dtype: str) -> list[tuple[int, int, float]]:
        """(mr, nr, GFLOP/s), best first."""
        conn = self._connect(create=False)
        if conn is None:
            return []
        rows = conn.execute("SELECT mr, nr, gflops FROM measurements WHERE target_key = ? AND family = ? "
                            "AND dtype = ? ORDER BY gflops DESC", (target_key(target), family, dtype)).fetchall()
        conn.close()
        return rows

    def best_tile(self, target: CpuTarget, family: str, dtype: str) -> tuple[int, int] | None:
        """The best measured tile that is a feasible candidate for the target, or None. The database is
        a cache: when it cannot be read (corrupt, locked, another schema) or holds a tile no candidate
        matches, a warning says so and the analytic choice is used."""
        from ..ukernel.space import candidates

        try:
            rows = self.measurements(target, family, dtype)
        except (sqlite3.Error, OSError, ValueError) as err:
            warnings.warn(f"tuning database {self.path} cannot be read ({err}); using the analytic uKernel choice",
                          TuningDatabaseWarning, stacklevel=2)
            return None
        feasible = {(c.tile.mr, c.tile.nr) for c in candidates(target, dtype) if c.feasible}
        for mr, nr, gflops in rows:
            if (mr, nr) in feasible and isinstance(gflops, (int, float)) and gflops > 0:
                return mr, nr
            warnings.warn(f"tuning database {self.path}: ignoring the row ({mr!r}, {nr!r}, {gflops!r}), not a "
                          f"feasible {dtype} uKernel of this target", TuningDatabaseWarning, stacklevel=2)
        return None


def chosen_tile(target, dtype: str, mr: int = 0, nr: int = 0, tuning: bool = True) -> tuple[int, int] | None:
    """The body register tile to compile with: forced (mr, nr), else the measured best when tuning is on
    and there is a measurement, else None (the analytic choice)."""
    if mr or nr:
        if not (mr > 0 and nr > 0):
            raise ValueError("mr and nr must be given together, both positive")
        return mr, nr
    if tuning and settings.tuning_enabled():
        return TuningDB().best_tile(target, "matmul", dtype)
    return None
