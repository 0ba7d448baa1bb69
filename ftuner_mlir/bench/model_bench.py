"""`ftuner bench --models`: whole transformers models, ftuner against torch eager and
torch.compile(dynamic=True), each baseline in a process of its own (model_worker.py).

Per (model, batch): ftuner compiles the model once with a dynamic T (model_demo.build_and_compile),
checks every output against torch eager in this process, and times each T; then each baseline process
builds the same model (same config, seed and inputs) and times it. Writes the table, models.json (every
figure, the machine) and models.png (ms per call against T, one panel per model and batch).
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from .model_demo import SIZE_NAMES, TOLERANCE, build_and_compile, relative_error, sizes_of
from .report import geomean

BASELINES = ("torch_eager", "torch_compile")     # model_worker.MODES
BF16_BASELINES = ("torch_eager", "torch_autocast_bf16", "openvino_bf16")   # with matmul_precision="bf16"


def available(baselines) -> tuple:
    """`baselines` less OpenVINO's where it is not installed (an optional extra: pip install openvino)."""
    import importlib.util
    return tuple(b for b in baselines if not b.startswith("openvino") or importlib.util.find_spec("openvino"))
# bf16 matmuls round each operand to 8 significant bits: the error against fp32 torch is judged against
# torch.autocast's own on the same inputs (at most twice it), not the fp32 tolerance
BF16_ERROR_FACTOR = 2.0
WORKER_TIMEOUT_S = 3600


def _ftuner_side(kind, batch, ts, layers, min_time, seed, config, matmul_precision="f32") -> dict:
    import ftuner_mlir.torch  # noqa: F401  (first: torch then shares the compiled code's OpenMP runtime)
    import torch

    from .measure import median_times
    from .transformer_models import inputs

    module, cfg, compiled, seconds = build_and_compile(kind, layers, batch, ts, seed, config,
                                                       matmul_precision=matmul_precision)
    rows = []
    with torch.no_grad():
        for length, ids in zip(ts, inputs(kind, cfg, batch, ts, seed)):
            want = module(ids)
            got = compiled(ids)
            row = {"T": length, "ftuner_s": median_times({"ftuner": lambda: compiled(ids)}, min_time)["ftuner"],
                   "rel_err": relative_error(got, want), "checksum": float(want.double().abs().sum())}
            if matmul_precision == "bf16":
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    row["autocast_rel_err"] = relative_error(module(ids).float(), want)
                row["tolerance"] = BF16_ERROR_FACTOR * row["autocast_rel_err"]
            rows.append(row)
    return {"ftuner_compile_s": seconds, "timings": compiled.timings, "rows": rows}


def _baseline(mode, kind, batch, ts, layers, min_time, seed, config) -> dict:
    """The baseline `mode` measured by a process of its own (torch's own OpenMP, nothing of ftuner)."""
    request = {"mode": mode, "model": kind, "batch": batch, "ts": list(ts), "layers": layers,
               "min_time": min_time, "seed": seed, "config": config or {}}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "ftuner_mlir.bench.model_worker", json.dumps(request)],
                          capture_output=True, text=True, timeout=WORKER_TIMEOUT_S)
    if done.returncode != 0:
        raise RuntimeError(f"the torch {mode} process failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["process_s"] = time.perf_counter() - started
    return result


def measure_model(kind, batch, ts, layers=None, min_time=0.3, seed=0, baselines=BASELINES, config=None,
                  log=print, matmul_precision="f32") -> dict:
    """One (model, batch): ftuner's rows merged with each baseline's, and the geomean speedups."""
    mine = _ftuner_side(kind, batch, ts, layers, min_time, seed, config, matmul_precision)
    log(f"{kind} batch {batch}: ftuner compiled once in {mine['ftuner_compile_s']:.1f} s")
    others = {mode: _baseline(mode, kind, batch, ts, layers, min_time, seed, config) for mode in baselines}
    rows = []
    for i, row in enumerate(mine["rows"]):
        merged = dict(row)
        for mode, other in others.items():
            theirs = other["rows"][i]
            merged[f"{mode}_s"] = theirs["seconds"]
            merged[f"{mode}_first_call_s"] = theirs["first_call_s"]
            if "rel_err" in theirs:
                merged[f"{mode}_rel_err"] = theirs["rel_err"]
            # same model and inputs in the other process: its output must be the one checked here
            merged[f"{mode}_same_output"] = abs(theirs["checksum"] - row["checksum"]) <= 1e-3 * abs(row["checksum"]) \
                or mode.endswith("_bf16")        # bf16 rounding moves the checksum past 1e-3
        rows.append(merged)
    speedup = {mode: geomean([r[f"{mode}_s"] / r["ftuner_s"] for r in rows]) for mode in others}
    worst = {mode: min(r[f"{mode}_s"] / r["ftuner_s"] for r in rows) for mode in others}
    return {"model": kind, "batch": batch, "layers": layers, "config": config or {}, "ts": list(ts),
            "ftuner_compile_s": mine["ftuner_compile_s"], "timings": mine["timings"], "rows": rows,
            "speedup_geomean": speedup, "speedup_worst": worst,
            "matmul_precision": matmul_precision,
            "failures": sum(not r["rel_err"] <= r.get("tolerance", TOLERANCE) for r in rows),
            "baseline_threads": {mode: other["threads"] for mode, other in others.items()}}


def format_table(result: dict) -> str:
    modes = [m for m in dict.fromkeys(BASELINES + BF16_BASELINES) if f"{m}_s" in result["rows"][0]]
    size = SIZE_NAMES.get(result["model"], "T")
    width = max(4, len(size))
    head = f"{size:>{width}} {'ftuner ms':>10}" + "".join(f" {m + ' ms':>16} {m + '/ftuner':>20}" for m in modes)
    lines = [f"{result['model']} batch {result['batch']}" + (f", {result['layers']} layers" if result["layers"] else ""),
             head + f" {'max rel.err':>11}"]
    for r in result["rows"]:
        cells = "".join(f" {r[f'{m}_s'] * 1e3:>16.2f} {r[f'{m}_s'] / r['ftuner_s']:>20.2f}" for m in modes)
        autocast = f" (autocast {r['autocast_rel_err']:.1e})" if "autocast_rel_err" in r else ""
        autocast += f" (openvino {r['openvino_bf16_rel_err']:.1e})" if "openvino_bf16_rel_err" in r else ""
        lines.append(f"{r['T']:>{width}} {r['ftuner_s'] * 1e3:>10.2f}{cells} {r['rel_err']:>11.1e}{autocast}"
                     f"{'' if r['rel_err'] <= r.get('tolerance', TOLERANCE) else '  WRONG'}")
    lines.append("geomean speedup (> 1: ftuner faster): " + ", ".join(
        f"vs {m} {result['speedup_geomean'][m]:.2f}x (worst T {result['speedup_worst'][m]:.2f}x)" for m in modes))
    return "\n".join(lines)


def write_png(path: Path, results: list[dict]) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    cols = min(2, len(results))
    fig, axes = plt.subplots(-(-len(results) // cols), cols, figsize=(7 * cols, 4.4 * -(-len(results) // cols)),
                             squeeze=False)
    for ax in axes.flat[len(results):]:
        ax.set_visible(False)
    for ax, res in zip(axes.flat, results):
        xs = [r["T"] for r in res["rows"]]
        for col, color in (("ftuner", "C3"), ("torch_eager", "C2"), ("torch_compile", "C0")):
            if f"{col}_s" in res["rows"][0]:
                label = {"torch_eager": "torch eager", "torch_compile": "torch.compile(dynamic=True)"}.get(col, col)
                ax.plot(xs, [r[f"{col}_s"] * 1e3 for r in res["rows"]], color=color, marker="o", markersize=3,
                        label=label)
        ax.set_title(f"{res['model']}, batch {res['batch']}", fontsize=10)
        ax.set_xlabel(SIZE_NAMES.get(res["model"], "T (sequence length)"))
        ax.set_ylabel("ms per call")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def run(models, batches, ts=None, layers=None, min_time=0.3, seed=0, baselines=BASELINES,
        out: Path = Path("bench-results"), machine: dict | None = None, config=None, log=print,
        matmul_precision: str = "f32") -> list[dict]:
    results = []
    out.mkdir(parents=True, exist_ok=True)
    for kind in models:
        for batch in batches:
            result = measure_model(kind, batch, sizes_of(kind, ts), layers, min_time, seed, baselines, config, log, matmul_precision)
            log(format_table(result))
            results.append(result)
            # after every model: a long run that is stopped keeps what it measured
            (out / "models.json").write_text(json.dumps({"machine": machine or {}, "models": results}, indent=1))
    plotted = write_png(out / "models.png", results)
    log(f"wrote {out / 'models.json'}" + (f" and {out / 'models.png'}" if plotted else " (no matplotlib: no plot)"))
    return results
