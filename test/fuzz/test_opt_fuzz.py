"""Mutated IR through ftuner-opt: every outcome is a clean result or a clean error (a diagnostic and exit
code 1), never a traceback, a signal or a hang. Seeded and bounded: FTUNER_FUZZ_CASES (default 60) cases
from FTUNER_SEED; a longer run: FTUNER_FUZZ_CASES=2000 pytest test/fuzz -q."""
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ftuner_mlir import models

CASES = int(os.environ.get("FTUNER_FUZZ_CASES", "60"))
SEED = int(os.environ.get("FTUNER_SEED", "20261201"))
PIPELINES = [["--ftuner-cpu-pipeline"], ["--ftuner-select-ukernels", "--ftuner-tile"], ["--canonicalize"]]
SEEDS = [models.dense(), models.matmul(), models.batch_matmul(), models.matmul_bias_relu()]
TOKENS = ["%", "{", "}", "(", ")", ":", ",", "tensor<?x?xf32>", "f32", "index", "linalg.matmul", "\"", "0",
          "-1", "4611686018427387904", "affine_map<(d0) -> (d0)>", "func.func", "return", "\n", "\x00", "é"]


def mutate(text: str, rng: random.Random) -> bytes:
    data = text
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice(["flip", "truncate", "delete-line", "duplicate-line", "token", "swap-lines"])
        lines = data.splitlines(keepends=True)
        if kind == "flip" and data:
            i = rng.randrange(len(data))
            data = data[:i] + chr(rng.randrange(32, 127)) + data[i + 1:]
        elif kind == "truncate" and data:
            data = data[:rng.randrange(len(data))]
        elif kind == "delete-line" and lines:
            del lines[rng.randrange(len(lines))]
            data = "".join(lines)
        elif kind == "duplicate-line" and lines:
            i = rng.randrange(len(lines))
            lines.insert(i, lines[i])
            data = "".join(lines)
        elif kind == "swap-lines" and len(lines) > 1:
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
            data = "".join(lines)
        elif kind == "token":
            i = rng.randrange(len(data) + 1)
            data = data[:i] + rng.choice(TOKENS) + data[i:]
    raw = data.encode("utf-8", "surrogatepass")
    if rng.random() < 0.05:
        i = rng.randrange(len(raw) + 1)
        raw = raw[:i] + bytes([rng.randrange(128, 256)]) + raw[i:]     # invalid UTF-8
    return raw


DIAGNOSTIC = re.compile(r"^(\S+:\d+(:\d+)?: error: |ftuner-opt: )", re.M)


def outcome(proc: subprocess.CompletedProcess) -> str:
    if proc.returncode < 0:
        return f"signal {-proc.returncode}"
    if "Traceback" in proc.stderr:
        return "traceback"
    if proc.returncode == 0:
        return "ok"
    if proc.returncode == 1 and DIAGNOSTIC.search(proc.stderr):
        return "error"
    return f"exit {proc.returncode} without a diagnostic"


def test_mutated_ir(tmp_path):
    rng = random.Random(SEED)
    print(f"seed {SEED}, {CASES} cases")
    counts: dict[str, int] = {}
    bad = []
    opt = str(Path(sys.executable).parent / "ftuner-opt")
    for case in range(CASES):
        # every tenth case is an unmutated seed: the harness must see successes too
        source = rng.choice(SEEDS).encode() if case % 10 == 0 else mutate(rng.choice(SEEDS), rng)
        path = tmp_path / f"case{case}.mlir"
        path.write_bytes(source)
        args = [opt, str(path), "--target=x86-avx512", *rng.choice(PIPELINES), "-o", str(tmp_path / "out.mlir")]
        try:
            proc = subprocess.run(args, capture_output=True, text=True, errors="replace", timeout=120)
            result = outcome(proc)
        except subprocess.TimeoutExpired:
            result, proc = "hang", None
        counts[result] = counts.get(result, 0) + 1
        if result not in ("ok", "error"):
            kept = tmp_path.parent / f"fuzz-failure-{case}.mlir"
            kept.write_bytes(source)
            bad.append(f"case {case} ({' '.join(args[2:])}): {result}; input kept in {kept}\n"
                       f"{(proc.stderr if proc else '')[-800:]}")
    print("outcomes:", counts)
    assert not bad, "\n\n".join(bad)
    assert counts.get("ok", 0) >= CASES // 10
    assert counts.get("ok", 0) + counts.get("error", 0) == CASES
