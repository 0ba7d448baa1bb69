"""`ftuner`: the main job.

    ftuner demo            compile the paper's Dense layer once, run it for T in a subset of 1..128
    ftuner demo --all      every T = 1..128
    ftuner demo --model bert|bert-large|gpt2   a whole transformers model (random weights), T = the
                           paper's 5..128, checked against torch eager and timed beside it
    ftuner target          the detected hardware model and the uKernel sets it selects
    ftuner bench           every column side by side: numpy, torch, padding to buckets, per-shape static
    ftuner tune            measure the best analytic uKernel candidates once; compile then uses the best
    ftuner export          a module compiled ahead of time (CPU or GPU): shared library + loader
    ftuner bench-conv      ResNet-50's conv layers against torch eager (batch x resolution)
    ftuner bench-compile   compile time against model size (1, 6, 24 Dense layers), cold and cached
    ftuner bench-coexist   torch eager and compiled code alternating in one process (OpenMP runtimes)
    ftuner cache           list or clear the on-disk cache of compiled modules
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

DEFAULT_T = (1, 2, 3, 5, 7, 8, 13, 16, 24, 31, 43, 62, 64, 81, 100, 119, 127, 128)


def _parse_ts(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi) + 1)) if hi else [int(lo)]
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError("T values must be positive integers, e.g. 1-16,32,128")
    return out


def _checked(convert, ok, expected: str):
    """An argparse type: `convert(text)`, refused unless `ok(value)`, with `expected` in the message."""
    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            value = None
        if value is None or not ok(value):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text}")
        return value
    return parse


_positive_int = _checked(int, lambda v: v >= 1, "a positive integer")
_seconds = _checked(float, lambda v: 0 < v <= 60, "0 < seconds <= 60")     # per shape and column


def _target(text: str) -> str:
    """Checked when parsing the command line, so a bad --target is a usage error on every subcommand."""
    from ftuner_mlir.hardware.targets import parse_target
    try:
        parse_target(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def _cpu_target(text: str) -> str:
    """A --target for the CPU-only subcommands (tune): a GPU target is a usage error, not a traceback."""
    from ftuner_mlir.hardware.targets import parse_target
    if parse_target(_target(text)).kind == "gpu":
        raise argparse.ArgumentTypeError(f"{text!r} is a GPU target; tuning measures CPU uKernels (GPU tiles come "
                                         f"from the analytic model: `ftuner target --target {text}`)")
    return text


def _single_threaded_references() -> None:
    """numpy's timed column runs in a process of its own (bench/library_worker.py); in this process numpy
    only computes float64 references, on one thread, so no OpenBLAS thread spins beside ftuner's timed
    calls. Call before numpy is imported; the library processes get the user's setting back."""
    from ftuner_mlir.bench.library_worker import SAVED_OPENBLAS_THREADS
    os.environ[SAVED_OPENBLAS_THREADS] = os.environ.get("OPENBLAS_NUM_THREADS", "")
    os.environ["OPENBLAS_NUM_THREADS"] = "1"


def demo(args) -> int:
    if args.model:
        return model_demo(args)
    if args.profile:
        print("ftuner demo: --profile needs --model (the Dense demo is one matmul)", file=sys.stderr)
        return 1
    _single_threaded_references()
    import types

    import numpy as np

    import ftuner_mlir
    from ftuner_mlir import models
    from ftuner_mlir.bench import library_worker
    from ftuner_mlir.bench.measure import median_times
    from ftuner_mlir.ukernel.cover import cover

    n, k = 2304, 768
    t0 = time.perf_counter()
    exe = ftuner_mlir.compile(models.dense(n, k), target=args.target)
    compile_s = time.perf_counter() - t0
    fn = exe["dense"]
    uks = fn.tiled_ops[0][0]
    print(f"Dense layer Y[16T x {n}] = X[16T x {k}] . W[{n} x {k}]^T, fp32, compiled once in {compile_s:.2f} s")
    print(f"target: {ftuner_mlir.parse_target(args.target).describe()}")
    print(f"uKernel set: {uks.describe()}")
    print(f"{'T':>4} {'M':>5} {'ms':>8} {'GFLOP/s':>8} {'numpy':>8} {'ratio':>6} {'rel.err':>8} {'pad%':>5}  uKernels used")
    rng = np.random.default_rng(args.seed)
    w = rng.standard_normal((n, k), dtype=np.float32)
    ratios, failures, rows = [], 0, []
    request = library_worker.request_for("numpy", "dense", types.SimpleNamespace(
        t=args.t, odd_count=1, seed=args.seed, min_time=args.min_time))
    numpy_column = library_worker.LibraryColumn(sys.executable, request)
    for index, t in enumerate(args.t):
        m = 16 * t
        x = rng.standard_normal((m, k), dtype=np.float32)
        y = fn(x, w)
        ref = x.astype(np.float64) @ w.astype(np.float64).T
        err = float(np.linalg.norm(y - ref) / np.linalg.norm(ref))
        ok = err < 1e-4 and np.isfinite(y).all()
        failures += not ok
        flops = 2.0 * m * n * k
        theirs = numpy_column.time(index)
        time.sleep(0.15)                       # its threads spin a while after it returns
        ours = median_times({"ftuner": lambda: fn(x, w)}, args.min_time)["ftuner"]
        cov = cover(uks, 1, m, n, k)
        used = " ".join(f"{r}x{c}" for (r, c) in sorted(cov.tiles, reverse=True))
        ratios.append(theirs / ours)
        rows.append({"T": t, "M": m, "seconds": ours, "gflops": flops / ours / 1e9, "numpy_gflops": flops / theirs / 1e9,
                     "rel_err": err, "padded_fraction": cov.padded_fraction, "ukernels": used.split(), "ok": bool(ok)})
        print(f"{t:>4} {m:>5} {ours * 1e3:>8.3f} {flops / ours / 1e9:>8.1f} {flops / theirs / 1e9:>8.1f} "
              f"{theirs / ours:>6.2f} {err:>8.1e} {100 * cov.padded_fraction:>5.1f}  {used}"
              f"{'' if ok else '  WRONG RESULT'}", flush=True)
    numpy_column.close()
    geo = float(np.exp(np.mean(np.log(ratios))))
    print(f"geomean speed vs numpy: {geo:.2f}x over {len(ratios)} shapes; "
          f"{'all results match numpy (rel. err < 1e-4)' if not failures else f'{failures} WRONG RESULTS'}")
    from ftuner_mlir import compiler
    how = "loaded from the on-disk cache" if exe.origin == "cache" else "compiled in a child process"
    print(f"compilations in this process: {compiler.compilations + compiler.cache_loads} ({how}; "
          f"one module served every shape)")
    if args.json:
        from ftuner_mlir.bench.run import machine
        with open(args.json, "w") as f:
            json.dump({"machine": machine(), "compile_s": compile_s, "origin": exe.origin, "ukernels": uks.describe(),
                       "geomean_vs_numpy": geo, "failures": failures, "rows": rows}, f, indent=1)
        print(f"wrote {args.json}")
    return 1 if failures else 0


def target(args) -> int:
    import ftuner_mlir
    from ftuner_mlir.families import FAMILIES

    tgt = ftuner_mlir.parse_target(args.target)
    if not (args.json and tgt.kind == "cpu"):
        print(tgt.describe())
    if tgt.kind == "gpu":
        from ftuner_mlir.ukernel.gpu_space import candidates, select_gpu
        feasible = [t for t, why in candidates(tgt) if why is None]
        print(f"block tile candidates: {len(feasible)} feasible of {len(candidates(tgt))}; best by intensity:")
        for t in sorted(feasible, key=lambda t: -t.intensity())[:6]:
            print(f"  {t.bm}x{t.bn}x{t.bk} thread tile {t.tm}x{t.tn}: {t.threads} threads, {t.registers} registers, "
                  f"{t.shared_bytes // 1024} KiB shared, {t.blocks_per_sm(tgt)} blocks/SM, "
                  f"intensity {t.intensity():.1f} flop/B")
        for family in FAMILIES:
            print(select_gpu(tgt, family).describe())
        return 0
    import dataclasses

    from ftuner_mlir.tuning.db import TuningDB
    from ftuner_mlir.ukernel import candidates, ranked_candidates, select
    analytic = ranked_candidates(tgt, "f32")[0].tile
    tuned = TuningDB().best_tile(tgt, "matmul", "f32")        # a faulty database: a warning and None
    if args.json:
        print(json.dumps({
            "target": dataclasses.asdict(tgt),
            "candidates": [{"mr": c.tile.mr, "nr": c.tile.nr, "registers": c.registers, "intensity": c.intensity,
                            "efficiency": c.efficiency, "rejected": c.rejected} for c in candidates(tgt, "f32")],
            "sets": {family: dataclasses.asdict(select(tgt, family, "f32")) for family in FAMILIES},
            "analytic": [analytic.mr, analytic.nr], "tuned": list(tuned) if tuned else None}, indent=1))
        return 0
    print("register tile candidates (f32): predicted fraction of the FMA peak from the port model")
    for c in candidates(tgt, "f32"):
        print(f"  {c.tile.mr:>2}x{c.tile.nr:<3} registers {c.registers:>2}  intensity {c.intensity:5.1f}  "
              f"efficiency {c.efficiency:4.2f}" + (f"  rejected: {c.rejected}" if c.rejected else ""))
    for family in FAMILIES:
        print(select(tgt, family, "f32").describe())
    if tuned:
        speed = next((g for mr, nr, g in TuningDB().measurements(tgt, "matmul", "f32") if (mr, nr) == tuned), 0.0)
        print(f"tuned choice (f32): {tuned[0]}x{tuned[1]} ({speed:.1f} GFLOP/s measured by ftuner tune); "
              f"analytic choice: {analytic.mr}x{analytic.nr}")
    else:
        print(f"tuned choice (f32): none measured (ftuner tune); analytic choice: {analytic.mr}x{analytic.nr}")
    _print_bf16(tgt)
    return 0


def _print_bf16(tgt) -> None:
    """The bf16 engine's choices: AMX's register blockings (with why each is rejected), then the bf16 set
    of every family (AVX512-BF16's register block is the fp32 model's, listed above)."""
    from ftuner_mlir.families import FAMILIES
    from ftuner_mlir.ukernel.bf16_space import blockings, engine_in_use, select_bf16
    engine, why = engine_in_use(tgt)
    print(f"bf16 matmuls: {why}")
    if engine == "none":
        return
    if engine == "amx":
        print("AMX register blockings (bf16): C tiles a x b fed by a A and b B tiles, loads per multiply")
        for block, why in blockings():
            print(f"  {block.a}x{block.b}  tiles {block.tiles}  loads/multiply {block.loads_per_multiply:.2f}"
                  + (f"  rejected: {why}" if why else ""))
    for family in FAMILIES:
        print(select_bf16(tgt, family).describe())


def bench(args) -> int:
    if args.compile_time:
        return bench_startup(args)
    if args.models:
        return bench_models(args)
    _single_threaded_references()
    from ftuner_mlir.bench.run import run_benchmark

    payload = run_benchmark(args)
    bad = [s["name"] for s in payload["sweeps"] if s["summary"]["max_rel_err"] >= 1e-4]
    if bad:
        print(f"WRONG RESULTS in {bad}")
    return 1 if bad else 0


def bench_models(args) -> int:
    try:
        import ftuner_mlir.torch  # noqa: F401  before torch: the compiled code and torch share one OpenMP
        from ftuner_mlir.bench import model_bench
    except ImportError as err:
        print(f"ftuner bench --models: needs the PyTorch extra (pip install -e .[torch]): {err}", file=sys.stderr)
        return 1
    from ftuner_mlir.bench.run import machine

    baselines = model_bench.BASELINES if args.torch_compile else model_bench.BASELINES[:1]
    if args.dtype == "bf16":        # the fp32 model with bf16 matmuls, against torch.autocast's
        baselines = model_bench.available(model_bench.BF16_BASELINES)
    results = model_bench.run(args.models, args.batches, args.model_t, args.layers, args.min_time, args.seed, baselines,
                              Path(args.out), machine(), matmul_precision=args.dtype)
    failures = sum(r["failures"] for r in results)
    if failures:
        print(f"WRONG RESULTS: {failures} outputs differ from torch eager")
    return 1 if failures else 0


def bench_startup(args) -> int:
    try:
        from ftuner_mlir.bench import startup
        import torch  # noqa: F401
    except ImportError as err:
        print(f"ftuner bench --compile-time: needs the PyTorch extra (pip install -e .[torch]): {err}", file=sys.stderr)
        return 1
    results = startup.run(args.models or ["bert", "gpt2"], args.out)
    failed = [f"{r['model']} {system}" for r in results for system, runs in r["systems"].items()
              if any("error" in row for row in runs.values())]
    if failed:
        print(f"FAILED: {', '.join(failed)}")
    return 1 if failed else 0


def _models(text: str) -> list[str]:
    from ftuner_mlir.bench.model_demo import MODELS       # not transformer_models: it imports torch
    names = [n for n in text.split(",") if n]
    unknown = [n for n in names if n not in MODELS]
    if not names or unknown:
        raise argparse.ArgumentTypeError(f"expected a comma-separated subset of {','.join(MODELS)}, got {text}")
    return names


def _batches(text: str) -> list[int]:
    return [_positive_int(part) for part in text.split(",")]


def tune(args) -> int:
    import ftuner_mlir
    from ftuner_mlir.tuning.db import TuningDB
    from ftuner_mlir.tuner.trials import tune as run_tune

    target = ftuner_mlir.parse_target(args.target)
    db = TuningDB(args.db)
    print(f"tuning the matmul family ({args.dtype}) on {target.describe()}")
    print(f"measuring the {args.top} best analytic register tiles, each in its own process, single-threaded "
          f"in thread CPU time, 5 rounds per probe shape")
    from ftuner_mlir.tuner.trials import machine_busy
    busy = machine_busy(target.cores)
    if busy:
        print(f"warning: {busy}")
    t0 = time.perf_counter()
    trials = run_tune(target, args.dtype, args.top, db)
    wall = time.perf_counter() - t0
    print(f"{'tile':>6} {'analytic rank':>13} {'GFLOP/s':>8} {'spread':>7}")
    for t in trials:
        print(f"{t.mr:>2}x{t.nr:<3} {t.analytic_rank:>13} " +
              (f"{t.gflops:8.1f} {100 * t.spread:6.1f}%" if t.gflops else f"  failed: {t.error}"))
    best = db.best_tile(target, "matmul", args.dtype)
    print(f"tuning took {wall:.1f} s wall; best {best[0]}x{best[1]} stored in {db.path}" if best else
          f"tuning took {wall:.1f} s wall; no candidate succeeded")
    if args.json:
        from ftuner_mlir.bench.run import machine
        Path(args.json).write_text(json.dumps({
            "machine": machine(), "target": target.describe(), "dtype": args.dtype, "busy": busy, "wall_s": wall,
            "trials": [dataclasses.asdict(t) for t in trials], "best": list(best) if best else None,
            "database": str(db.path)}, indent=1))
        print(f"wrote {args.json}")
    return 0 if best else 1


def export(args) -> int:
    from ftuner_mlir import models
    from ftuner_mlir.errors import CompileError
    from ftuner_mlir.export import export as run_export

    source = models.MODELS[args.model]() if args.model else open(args.input).read()
    try:
        out = run_export(source, args.target, args.out, args.name)
    except (CompileError, ValueError) as err:
        print(f"ftuner export: {err}", file=sys.stderr)
        return 1
    files = ", ".join(sorted(p.name for p in out.iterdir()))
    print(f"exported to {out}: {files}")
    return 0


def bench_compile(args) -> int:
    from ftuner_mlir.bench.compile_time import run

    rows = run(args.layers)
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0


def bench_conv(args) -> int:
    from ftuner_mlir.bench import conv
    from ftuner_mlir.bench.library_worker import find_python

    python = find_python(args.torch_python)
    if python is None:
        print("ftuner bench-conv: PyTorch is not installed (pip install -e .[torch], or --torch-python PATH)",
              file=sys.stderr)
        return 1
    result = conv.run(args.batch, args.res, python, args.min_time, args.target)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    return 0


def model_demo(args) -> int:
    try:
        from ftuner_mlir.bench import model_demo
    except ImportError as err:
        print(f"ftuner demo --model: needs the PyTorch extra (pip install -e .[torch]): {err}", file=sys.stderr)
        return 1
    ts = args.t if args.t != list(DEFAULT_T) else list(model_demo.sizes_of(args.model))
    result = model_demo.run(args.model, args.layers, args.batch, ts, args.min_time, args.seed, args.profile)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    return 1 if result["failures"] else 0


def bench_coexist(args) -> int:
    from ftuner_mlir.bench import coexist

    rows = coexist.run()
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


def cache(args) -> int:
    from ftuner_mlir.backends import cache as module_cache

    if args.action == "clear":
        print(f"removed {module_cache.clear()} compiled modules from {module_cache.root()}")
        return 0
    rows = module_cache.entries()
    if args.json:
        print(json.dumps([{"folder": str(folder), "bytes": size, "functions": sorted(m.get("functions", {})),
                           "target": m.get("target", {}).get("name"), "seconds": m.get("seconds", {})}
                          for folder, size, m in rows], indent=1))
        return 0
    total = sum(size for _, size, _ in rows)
    print(f"{len(rows)} compiled modules in {module_cache.root()}, {total / 2**20:.1f} MiB")
    for folder, size, manifest in rows:
        functions = ",".join(sorted(manifest.get("functions", {}))) or "?"
        target = manifest.get("target", {}).get("name", "?")
        built_s = sum(manifest.get("seconds", {}).values())
        print(f"  {folder.name[:16]}  {size / 1024:8.1f} KiB  target {target:<12} built in {built_s:5.2f} s  @{functions}")
    return 0


SWEEPS = ("dense", "bmm_tx64xt", "bmm_txtx64", "odd")


def _sweeps(text: str) -> list[str]:
    names = text.split(",")
    unknown = [name for name in names if name not in SWEEPS]
    if unknown:
        raise argparse.ArgumentTypeError(f"no sweep named {', '.join(map(repr, unknown))}; the sweeps are "
                                         f"{', '.join(SWEEPS)}")
    return names


def add_bench_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sweeps", type=_sweeps, default=list(SWEEPS),
                   help=f"comma-separated subset of {','.join(SWEEPS)} (default: all)")
    p.add_argument("--t", type=_parse_ts, default=list(range(1, 129)),
                   help="Dense T values (M = 16*T), e.g. 1-16,32 (default: 1-128)")
    p.add_argument("--odd-count", type=_positive_int, default=16, help="how many odd shapes (default: %(default)s)")
    p.add_argument("--min-time", type=_seconds, default=0.2, help="seconds of timed runs per column and case")
    p.add_argument("--no-static", dest="static", action="store_false", help="skip the per-shape static column")
    p.add_argument("--no-padded", dest="padded", action="store_false", help="skip the padding-to-buckets column")
    p.add_argument("--no-frozen", dest="frozen", action="store_false",
                   help="skip the prepacked column (Dense: the weight frozen into the module, freeze_arguments)")
    p.add_argument("--no-single-thread", dest="single_thread", action="store_false",
                   help="skip the single-threaded Dense cases (T = 1, 16, 128: %% of one core's FMA peak)")
    p.add_argument("--dtype", default="f32", choices=("f32", "bf16"),
                   help="operands of the sweeps: bf16 runs the matrix engine (AMX) with fp32 accumulation, against "
                        "torch's bf16 matmuls and the measured AMX peak; no numpy column. With --models: the fp32 "
                        "model compiled with matmul_precision=bf16, against torch eager and torch.autocast(bf16) "
                        "(default: f32)")
    p.add_argument("--no-torch", dest="torch", action="store_false", help="skip PyTorch even if installed")
    p.add_argument("--torch-python", default=None,
                   help="interpreter with torch installed for the PyTorch column (default: this one)")
    p.add_argument("--target", type=_target, default="host")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="bench-results", help="folder for bench.json and bench.png")
    p.add_argument("--models", type=_models, nargs="?", const=["bert", "bert-large", "gpt2"], default=None,
                   help="whole transformers models instead of the operator sweeps: a comma-separated subset of "
                        "bert,bert-large,gpt2,roberta,distilbert,t5-encoder,t5,llama,vit,resnet,convnext,wav2vec2 "
                        "(default: bert,bert-large,gpt2), full size from their default configs (t5: T5-small encoder-"
                        "decoder, the source also its target; llama: SmolLM-135M's shape; vit: ViT-B/16, resnet: "
                        "ResNet-50, convnext: ConvNeXt-T, the image side varying; wav2vec2: base, the samples), "
                        "against torch eager and torch.compile(dynamic=True), "
                        "each in its own process; writes models.json and models.png")
    p.add_argument("--batches", type=_batches, default=[1, 16], help="with --models: batch sizes (default: 1,16)")
    p.add_argument("--layers", type=_positive_int, default=None,
                   help="with --models: layers to build (default: the config's)")
    p.add_argument("--model-t", type=_parse_ts, default=None,
                   help="with --models: the sizes (T; an image side for vit and resnet, samples for wav2vec2; default: "
                        "the paper's T 5,24,43,62,81,100,119,128; sides 96,160,224,288,384; 8000..48000 samples)")
    p.add_argument("--no-torch-compile", dest="torch_compile", action="store_false",
                   help="with --models: skip the torch.compile(dynamic=True) column")
    p.add_argument("--compile-time", action="store_true",
                   help="start-up instead of speed: seconds from the torch module to the first result of the "
                        "--models (default: bert,gpt2), cold and warm, ftuner (export / key / import / compile) "
                        "against torch.compile, OpenVINO and ONNX Runtime where installed, each in a fresh "
                        "process; then a first call at a new batch size; writes startup.json")


def main(argv=None) -> None:
    from ftuner_mlir.version import describe
    parser = argparse.ArgumentParser(prog="ftuner", description="FTuner-style dynamic-shape compiler on MLIR")
    parser.add_argument("--version", action="version", version=describe("ftuner"))
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("demo", help="compile the Dense layer once and run it on many shapes")
    p.add_argument("--t", type=_parse_ts, default=list(DEFAULT_T),
                   help="T values (M = 16*T), e.g. 1-16,32,128 (default: %(default)s)")
    p.add_argument("--all", dest="t", action="store_const", const=list(range(1, 129)), help="T = 1..128")
    p.add_argument("--target", type=_target, default="host", help="host, x86-avx512, x86-avx2 or a JSON file")
    p.add_argument("--min-time", type=_seconds, default=0.2, help="seconds of timed runs per shape and column")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", metavar="PATH", help="also write the table, the machine and the versions as JSON")
    p.add_argument("--model", choices=("bert", "bert-large", "gpt2"),
                   help="a whole transformers model instead of the Dense layer (T default: the paper's 5..128)")
    p.add_argument("--layers", type=_positive_int, default=None,
                   help="with --model: layers to build (default: the config's, 12 / 24 / 12)")
    p.add_argument("--batch", type=_positive_int, default=16, help="with --model: the batch size (default: 16)")
    p.add_argument("--profile", action="store_true",
                   help="with --model: compile with clocks and print where the time goes, by kind of op")
    p.set_defaults(run=demo)
    p = sub.add_parser("bench", help="benchmark every column side by side; JSON + PNG")
    add_bench_arguments(p)
    p.set_defaults(run=bench)
    p = sub.add_parser("tune", help="measure the best analytic uKernels once; results go to the tuning database")
    p.add_argument("--target", type=_cpu_target, default="host")
    p.add_argument("--dtype", default="f32", choices=("f32", "f64"))
    p.add_argument("--top", type=_positive_int, default=6, help="how many analytic candidates to measure")
    p.add_argument("--db", default=None, help="database file (default: the cache dir; FTUNER_CACHE_DIR)")
    p.add_argument("--json", default=None, metavar="PATH", help="also write the trials, the machine and the best tile as JSON")
    p.set_defaults(run=tune)
    p = sub.add_parser("export", help="compile a module into a shared library + Python loader (CPU or GPU)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("input", nargs="?", help="MLIR file")
    src.add_argument("--model", choices=["dense", "batch_matmul", "matmul"], help="a built-in workload")
    p.add_argument("--target", type=_target, default="host", help="host (default), x86-avx512, x86-avx2, a JSON file, or cuda:<gpu>")
    p.add_argument("-o", "--out", default="exported", help="output folder (default: %(default)s)")
    p.add_argument("--name", default="model", help="library name: lib<name>.so")
    p.set_defaults(run=export)
    p = sub.add_parser("bench-compile", help="compile time of 1, 6, 24 chained Dense layers; cache hits")
    p.add_argument("--layers", type=_parse_ts, default=[1, 6, 24], help="layer counts (default: 1,6,24)")
    p.add_argument("--json", action="store_true", help="also print the rows as JSON")
    p.set_defaults(run=bench_compile)
    p = sub.add_parser("bench-conv", help="ResNet-50's conv layers against torch eager over batch and resolution")
    p.add_argument("--batch", type=_parse_ts, default=[1, 4, 16], help="batch sizes (default: 1,4,16)")
    p.add_argument("--res", type=_parse_ts, default=[160, 224, 320], help="input resolutions (default: 160,224,320)")
    p.add_argument("--torch-python", default=None, help="an interpreter with torch (default: this one)")
    p.add_argument("--min-time", type=_seconds, default=0.5, help="seconds of timing per column and case")
    p.add_argument("--target", type=_target, default="host", help="as for compile")
    p.add_argument("--json", default=None, metavar="PATH", help="also write the rows as JSON to PATH")
    p.set_defaults(run=bench_conv)
    p = sub.add_parser("bench-coexist", help="torch eager and compiled code alternating in one process")
    p.add_argument("--json", default=None, metavar="PATH", help="also write the rows as JSON to PATH")
    p.set_defaults(run=bench_coexist)
    p = sub.add_parser("cache", help="list (default) or clear the on-disk cache of compiled modules")
    p.add_argument("action", nargs="?", choices=("list", "clear"), default="list")
    p.add_argument("--json", action="store_true", help="the entries as JSON")
    p.set_defaults(run=cache)
    p = sub.add_parser("target", help="print the hardware model and the uKernel sets it selects")
    p.add_argument("--target", type=_target, default="host")
    p.add_argument("--json", action="store_true", help="the target, candidates and sets as JSON (CPU targets)")
    p.set_defaults(run=target)
    args = parser.parse_args(argv)
    sys.exit(_run(args))


def _run(args) -> int:
    """Errors the user can act on are one line on stderr and exit code 1, never a traceback."""
    from ftuner_mlir.errors import CompileError
    try:
        return args.run(args)
    except BrokenPipeError:            # e.g. `ftuner target | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (CompileError, ValueError, OSError) as err:
        print(f"ftuner {args.command}: error: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    main()
