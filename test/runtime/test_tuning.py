"""The tuning database and the tuner: measured tiles are stored, then used by compile()."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ftuner_mlir
from ftuner_mlir import models
from ftuner_mlir.hardware.cpu import PRESETS, detect_host
from ftuner_mlir.tuning.db import TuningDB
from ftuner_mlir.ukernel.space import ranked_candidates
from ftuner_mlir.tuner.trials import Trial, run_trial, tune

from .helpers import assert_matches, random


def test_db_roundtrip(tmp_path):
    db = TuningDB(tmp_path / "t.sqlite")
    target = PRESETS["x86-avx512"]
    assert db.best_tile(target, "matmul", "f32") is None
    db.record(target, "matmul", "f32", 4, 64, 150.0, 0)
    db.record(target, "matmul", "f32", 8, 32, 170.0, 1)
    db.record(target, "matmul", "f64", 4, 16, 90.0, 0)
    assert db.best_tile(target, "matmul", "f32") == (8, 32)
    assert db.best_tile(target, "matmul", "f64") == (4, 16)
    assert db.best_tile(PRESETS["x86-avx2"], "matmul", "f32") is None     # keyed by target
    db.record(target, "matmul", "f32", 8, 32, 120.0, 1)       # re-measured slower (a busier machine):
    assert db.best_tile(target, "matmul", "f32") == (8, 32)   # the tile keeps its best measurement
    assert (8, 32, 170.0) in db.measurements(target, "matmul", "f32")
    db.record(target, "matmul", "f32", 4, 64, 180.0, 0)       # a better measurement does replace the choice
    assert db.best_tile(target, "matmul", "f32") == (4, 64)


def test_compile_uses_the_measured_tile(rng):
    target = detect_host()
    db = TuningDB()                      # the test session's own (see conftest)
    src = models.matmul() + "\n// tuned variant\n"
    analytic = ftuner_mlir.compile(src, target, tuning=False)
    chosen = analytic["matmul"].tiled_ops[0][0]
    other = next(c.tile for c in ranked_candidates(target) if (c.tile.mr, c.tile.nr) != (chosen.mr, chosen.nr))
    db.record(target, "matmul", "f32", other.mr, other.nr, 1e6, 5)
    try:
        tuned = ftuner_mlir.compile(src, target)
        uks = tuned["matmul"].tiled_ops[0][0]
        assert (uks.mr, uks.nr) == (other.mr, other.nr)
        a, b = random(rng, (37, 53)), random(rng, (53, 71))
        assert_matches(tuned(a, b), a.astype(np.float64) @ b, np.abs(a).astype(np.float64) @ np.abs(b))
    finally:
        TuningDB().path.unlink()


def test_tune_measures_and_records(tmp_path):
    db = TuningDB(tmp_path / "t.sqlite")
    trials = tune(detect_host(), "f32", top=2, db=db, progress=False)
    assert len(trials) == 2 and all(t.gflops and t.gflops > 0 for t in trials), trials
    assert all(t.spread is not None and t.spread >= 0 for t in trials)
    assert db.best_tile(detect_host(), "matmul", "f32") == (trials[0].mr, trials[0].nr)


def test_tune_command_writes_json(tmp_path):
    """`ftuner tune --json`: the trials as measured, the tile stored as best, the machine."""
    out, db = tmp_path / "tune.json", tmp_path / "t.sqlite"
    r = subprocess.run([str(Path(sys.executable).parent / "ftuner"), "tune", "--top", "1", "--db", str(db),
                        "--json", str(out)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    (trial,) = data["trials"]
    assert trial["gflops"] > 0 and data["best"] == [trial["mr"], trial["nr"]] and data["dtype"] == "f32"
    assert data["machine"]["cpu"] and data["database"] == str(db)


def test_a_broken_candidate_is_reported_not_fatal():
    trial = run_trial(detect_host(), "f32", Trial(4, 0, 0))
    assert trial.gflops is None and "mr and nr must be given together" in trial.error


@pytest.mark.parametrize("options, message", [("mr=4", "mr and nr must be given together")])
def test_select_options(options, message):
    from ftuner_mlir.driver import instantiate
    with pytest.raises(ValueError, match=message):
        instantiate(f"ftuner-select-ukernels{{{options}}}", None).tile_for(None, "f32")


def test_busy_machine_warning(monkeypatch):
    from ftuner_mlir.tuner import trials as tuner
    monkeypatch.setattr(tuner.os, "getloadavg", lambda: (5.0, 5.0, 5.0))
    assert "load average 5.0 on 2 cores" in tuner.machine_busy(2)
    monkeypatch.setattr(tuner.os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    assert tuner.machine_busy(2) is None
