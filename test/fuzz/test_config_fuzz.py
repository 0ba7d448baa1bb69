"""Faulty configuration: mutated target files and damaged tuning databases. Every outcome is a clean
result or a clean error, never a traceback, a signal or a hang:
- a target file is either refused with a ValueError naming the file or a field, or accepted, and then
  the uKernel choice for it is made in bounded time and fits the target's registers; some accepted
  targets compile a matmul that must be exact, and some go through `ftuner target` (exit 0 or a one-line
  error with exit 2);
- a tuning database in any state is either used (a feasible measured tile) or ignored with a
  TuningDatabaseWarning and the analytic choice, and compile() still gives exact results.
Seeded and bounded: FTUNER_FUZZ_CASES (default 60) cases from FTUNER_SEED."""
import contextlib
import dataclasses
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import ftuner_mlir
from ftuner_mlir import models
from ftuner_mlir.hardware.cpu import PHYSICAL_RANGES, PRESETS, detect_host, missing_host_features
from ftuner_mlir.hardware.gpu import GPU_PHYSICAL_RANGES, GPU_PRESETS
from ftuner_mlir.hardware.targets import parse_target
from ftuner_mlir.tuning.db import TuningDatabaseWarning, TuningDB, chosen_tile, target_key
from ftuner_mlir.ukernel.gpu_space import select_gpu
from ftuner_mlir.ukernel.space import select

CASES = int(os.environ.get("FTUNER_FUZZ_CASES", "60"))
SEED = int(os.environ.get("FTUNER_SEED", "20261201"))
ODD_VALUES = [0, 1, -1, 2, 3, 7, 2 ** 31, 2 ** 63, -2 ** 63, 10 ** 30, 0.5, 1e308, float("nan"), float("inf"),
              "", "64", "avx512", True, False, None, [], {}, [1, 2], {"a": 1}]


@contextlib.contextmanager
def time_limit(seconds: int):
    """A hang becomes a failure of this case, not of the whole run."""
    def expire(*_):
        raise TimeoutError(f"no answer within {seconds} s")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _odd_value(rng: random.Random, ranges: dict, field: str):
    lo, hi = ranges.get(field, (1, 2 ** 20))
    choice = rng.random()
    if choice < 0.35:
        return rng.choice([lo, hi, lo - 1, hi + 1, type(lo)(lo * 2) if lo else 1, hi // 2 if isinstance(hi, int) else hi / 2])
    if choice < 0.6:
        return rng.randrange(int(lo), int(hi) + 1) if isinstance(lo, int) else rng.uniform(lo, hi)
    return rng.choice(ODD_VALUES)


def mutated_target(rng: random.Random) -> tuple[bytes, bool]:
    """The bytes of a target file and whether it is a GPU target."""
    gpu = rng.random() < 0.3
    presets, ranges = (GPU_PRESETS, GPU_PHYSICAL_RANGES) if gpu else (PRESETS, PHYSICAL_RANGES)
    data = dataclasses.asdict(rng.choice(list(presets.values())))
    fields = list(data)
    for _ in range(rng.randint(0, 3)):
        kind = rng.random()
        field = rng.choice(fields)
        if kind < 0.65:
            data[field] = _odd_value(rng, ranges, field)
        elif kind < 0.8:
            data.pop(field, None)
        elif kind < 0.9:
            data[rng.choice(["l4_bytes", "Cores", "", "isa "])] = 1
        else:
            data["isa" if not gpu else "chip"] = rng.choice(["avx2", "avx512", "sse", "neon", "sm_80", "sm_9", 90])
    whole = rng.random()
    if whole < 0.08:
        return rng.choice([b"", b"[]", b"null", b"42", b'"x86"', b"{", b"[" * 50000, b"\xff\xfe{}"]), gpu
    text = json.dumps(data, allow_nan=True).encode()
    if whole < 0.15:
        text = text[:rng.randrange(len(text))]
    return text, gpu


def _check_target(path: Path, gpu: bool) -> tuple[str, object]:
    spec = f"cuda:{path}" if gpu else str(path)
    try:
        target = parse_target(spec)
    except ValueError as err:
        assert str(path) in str(err) or "field" in str(err) or "isa" in str(err), f"unclear message: {err}"
        return "refused", None
    if gpu:
        for family in ("matmul", "batch_matmul"):
            try:
                uks = select_gpu(target, family)
            except ValueError as err:            # a target no tile fits: compile() refuses it up front
                assert "no GPU uKernel tile fits target" in str(err), err
                return "unusable", None
            for tile in (uks.body, uks.edge):
                assert tile.threads <= target.max_threads_per_block, (target, uks)
                assert tile.shared_bytes <= target.shared_bytes_per_block, (target, uks)
        return "accepted", target
    for dtype in ("f32", "f64"):
        uks = select(target, "matmul", dtype)
        vector_regs = uks.mr * uks.nr // uks.lanes + uks.nr // uks.lanes + 1
        assert uks.mr >= 1 and uks.nr >= 1 and vector_regs <= target.vector_registers, (target, uks)
        assert uks.kc >= 1 and uks.mc >= uks.mr and uks.nc >= uks.nr, (target, uks)
    return "accepted", target


def _check_cli(path: Path, gpu: bool, result: str, target, tmp_path: Path, opt: bool) -> None:
    """`ftuner target` or `ftuner-opt` with the file: the outcome parse_target gave, as a clean exit."""
    spec = f"cuda:{path}" if gpu else str(path)
    if opt:
        source = tmp_path / "matmul.mlir"
        source.write_text(models.matmul())
        cmd = ["ftuner-opt", f"--target={spec}", "--ftuner-select-ukernels", str(source)]
    else:
        cmd = ["ftuner", "target", "--target", spec]
    proc = subprocess.run([str(Path(sys.executable).parent / cmd[0]), *cmd[1:]], capture_output=True, text=True,
                          timeout=120)
    assert "Traceback" not in proc.stderr and proc.returncode >= 0, proc.stderr
    if result == "accepted":
        assert proc.returncode == 0 and (opt or target.name in proc.stdout), proc.stderr
        return
    assert len(proc.stderr.strip().splitlines()) <= 2, proc.stderr        # argparse adds its usage line
    if opt:
        assert proc.returncode == 1 and proc.stderr.startswith("ftuner-opt: "), proc.stderr
    elif result == "refused":
        assert proc.returncode == 2 and "error: argument --target" in proc.stderr, proc.stderr
    else:
        assert proc.returncode == 1 and "no GPU uKernel tile fits" in proc.stderr, proc.stderr


def test_mutated_targets(tmp_path, rng):
    cases = random.Random(SEED)
    host = detect_host()
    counts: dict[str, int] = {}
    compiled, cli_runs = 0, 0
    for case in range(CASES):
        raw, gpu = mutated_target(cases)
        path = tmp_path / f"target{case}.json"
        path.write_bytes(raw)
        with time_limit(30):
            result, target = _check_target(path, gpu)
        counts[result] = counts.get(result, 0) + 1
        if target is not None and not gpu and compiled < 2 and not missing_host_features(target):
            # the code compiled for an accepted target is exact (cores, caches, tiles all come from it)
            compiled += 1
            exe = ftuner_mlir.compile(models.matmul(), target=target, num_threads=min(target.cores, 2))
            a, b = rng.standard_normal((37, 29), np.float32), rng.standard_normal((29, 41), np.float32)
            out = np.full((37, 41), np.nan, np.float32)
            exe(a, b, out=out)
            np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
        if case % 8 == 0:
            cli_runs += 1
            _check_cli(path, gpu, result, target, tmp_path, opt=case % 16 == 0)
    print(f"seed {SEED}: {counts}, {compiled} compiled and run, {cli_runs} through `ftuner target` or ftuner-opt")
    assert counts.get("refused", 0) + counts.get("accepted", 0) + counts.get("unusable", 0) == CASES
    assert counts.get("accepted", 0) >= CASES // 10 and counts.get("refused", 0) >= CASES // 10


# --- tuning database faults -----------------------------------------------------------------------

def _valid_db(path: Path, target, rows: list[tuple]) -> None:
    for mr, nr, gflops in rows:
        TuningDB(path).record(target, "matmul", "f32", mr, nr, gflops, 0)


def damaged_db(path: Path, target, rng: random.Random) -> str:
    """Write a tuning database with one fault into `path`; the fault's name."""
    fault = rng.choice(["garbage", "truncated", "flipped", "wrong-schema", "odd-rows", "directory", "empty",
                        "huge-tile", "good"])
    if fault == "directory":
        path.mkdir()
        return fault
    if fault in ("garbage", "empty"):
        path.write_bytes(bytes(rng.randrange(256) for _ in range(rng.choice([0, 10, 4096]))) if fault == "garbage"
                         else b"")
        return fault
    if fault == "wrong-schema":
        conn = sqlite3.connect(path)
        conn.execute(rng.choice(["CREATE TABLE measurements (x TEXT)",
                                 "CREATE TABLE measurements (target_key TEXT, mr TEXT, nr TEXT, gflops TEXT)",
                                 "CREATE VIEW measurements AS SELECT 1 AS mr"]))
        conn.commit()
        conn.close()
        return fault
    rows = {"odd-rows": [(rng.choice([0, -1, 3, "x", 1.5, None]), rng.choice([0, -16, 7, "y", 2.5]),
                          rng.choice([1e9, -5.0, float("nan"), 0.0, "fast"])) for _ in range(4)],
            "huge-tile": [(1024, 1024, 1e6), (2 ** 40, 16, 1e6)],
            }.get(fault, [(8, 32, 100.0), (16, 16, 90.0)])
    conn = sqlite3.connect(path)
    if fault == "odd-rows":       # a schema without the column types and constraints, so anything goes in
        conn.execute("CREATE TABLE measurements (target_key, target, family, dtype, mr, nr, gflops, "
                     "analytic_rank, measured_at)")
        conn.executemany("INSERT INTO measurements VALUES (?, ?, 'matmul', 'f32', ?, ?, ?, 0, 'now')",
                         [(target_key(target), target.name, *row) for row in rows])
        conn.commit()
        conn.close()
    else:
        conn.close()
        _valid_db(path, target, rows)
    if fault in ("truncated", "flipped"):
        data = bytearray(path.read_bytes())
        if fault == "truncated":
            data = data[:rng.randrange(len(data))]
        else:
            for _ in range(rng.randint(1, 20)):
                data[rng.randrange(len(data))] = rng.randrange(256)
        path.write_bytes(bytes(data))
    return fault


@pytest.fixture
def own_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("FTUNER_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    return tmp_path / "cache"


def test_damaged_tuning_databases(own_cache_dir, rng):
    cases = random.Random(SEED + 1)
    target = PRESETS["intel-spr"]
    feasible = {(8, 32), (16, 16)}
    path = TuningDB().path
    counts: dict[str, int] = {}
    for case in range(CASES):
        if path.is_dir():
            path.rmdir()
        path.unlink(missing_ok=True)
        fault = damaged_db(path, target, cases)
        with warnings.catch_warnings(record=True) as caught, time_limit(30):
            warnings.simplefilter("always")
            tile = chosen_tile(target, "f32")
        others = [w for w in caught if not issubclass(w.category, TuningDatabaseWarning)]
        assert not others, [str(w.message) for w in others]
        if tile is None:
            outcome = "warned" if caught else "empty"
        else:
            assert tile in feasible, (fault, tile)
            outcome = "used"
        if fault == "good":
            assert tile == (8, 32), fault
        counts[f"{fault}:{outcome}"] = counts.get(f"{fault}:{outcome}", 0) + 1
    print(f"seed {SEED + 1}: {dict(sorted(counts.items()))}")
    assert sum(counts.values()) == CASES


def test_compile_goes_on_with_a_damaged_database(own_cache_dir, rng):
    """compile() reads the database in the caller: a damaged one is a warning, and the module is exact."""
    path = TuningDB().path
    path.write_bytes(b"SQLite format 3\x00" + os.urandom(2000))
    with pytest.warns(TuningDatabaseWarning, match="cannot be read"):
        exe = ftuner_mlir.compile(models.matmul(), num_threads=1)
    a, b = rng.standard_normal((13, 70), np.float32), rng.standard_normal((70, 5), np.float32)
    out = np.full((13, 5), np.nan, np.float32)
    exe(a, b, out=out)
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def test_locked_database_is_waited_for_briefly(own_cache_dir):
    target = PRESETS["intel-spr"]
    path = TuningDB().path
    _valid_db(path, target, [(8, 32, 100.0)])
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with warnings.catch_warnings(record=True) as caught, time_limit(10):
            warnings.simplefilter("always")
            assert chosen_tile(target, "f32") is None
        assert any("locked" in str(w.message) for w in caught), [str(w.message) for w in caught]
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert chosen_tile(target, "f32") == (8, 32)
