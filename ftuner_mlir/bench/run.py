"""Run the benchmark sweeps: every column of every case in the same process, results checked."""
from __future__ import annotations

import sys
import time

import numpy as np

from . import workloads
from .baselines import KernelCache, Padded
from .measure import median_times


def rel_err(result, reference) -> float:
    return float(np.linalg.norm(result - reference) / max(np.linalg.norm(reference), 1e-30))


def _frozen(sweep, compile_fn, options, rng):
    """The prepacked column: ftuner with the sweep's weight frozen into the module (freeze_arguments:
    packed once, at compile time), and that weight, which every case then uses. None without one."""
    if sweep.weight is None or not getattr(options, "frozen", True):
        return None, None
    from ..freeze import freeze_arguments
    weight = sweep.inputs(sweep.cases[0], rng)[sweep.weight]
    return compile_fn(freeze_arguments(sweep.dynamic_model(), {sweep.weight: weight})), weight


def run_sweep(sweep, compile_fn, limits, options, log=print, libraries=None) -> dict:
    """One sweep: ftuner (compiled once), ftuner with the weight prepacked (sweeps that have one),
    padded buckets, per-shape static kernels, and the libraries (`libraries`: name ->
    library_worker.LibraryColumn, each in its own process), each case measured by the libraries right
    before the other columns. Without `libraries`, numpy runs in this process."""
    t0 = time.perf_counter()
    exe = compile_fn(sweep.dynamic_model())
    dynamic_compile = time.perf_counter() - t0
    static = KernelCache(sweep, compile_fn) if options.static else None
    padded = Padded(sweep, compile_fn) if options.padded else None
    rng = np.random.default_rng(options.seed)
    frozen, weight = _frozen(sweep, compile_fn, options, rng)
    rows = []
    for index, case in enumerate(sweep.cases):
        inputs = sweep.inputs(case, rng)
        if frozen is not None:
            inputs[sweep.weight] = weight
            others = [a for i, a in enumerate(inputs) if i != sweep.weight]
        reference = sweep.reference(*[a.astype(np.float64) for a in inputs])
        out = workloads.aligned_output(case.out_shape)
        errors = {"ftuner": rel_err(exe(*inputs, out=out), reference)}
        columns = {"ftuner": lambda: exe(*inputs)}
        if frozen is not None:
            errors["frozen"] = rel_err(frozen(*others, out=np.full(case.out_shape, np.nan, np.float32)), reference)
            columns["frozen"] = lambda: frozen(*others)
        if libraries is None and sweep.dtype == "f32":
            columns["numpy"] = lambda: sweep.reference(*inputs)
        covered = [cov for _, cov in exe.coverage(*case.shapes)]
        row = dict(x=case.x, dims=case.dims, flops=case.flops,
                   ftuner_padded_work=max((c.padded_fraction for c in covered if c), default=0.0),
                   ukernels=sorted({f"{r}x{c}" for cov in covered if cov for (r, c) in cov.tiles}))
        if padded is not None:
            columns["padded"] = padded.runner(case, inputs)
            errors["padded"] = rel_err(columns["padded"](), reference)
            row["padded_waste"] = padded.wasted_fraction(case)
        if static is not None:
            kernel, seconds = static.get(case.dims)
            columns["static"] = lambda: kernel(*inputs)
            errors["static"] = rel_err(kernel(*inputs), reference)
            row["static_compile_s"] = seconds
        library_times = {name: column.time(index) for name, column in (libraries or {}).items()}
        if library_times:
            time.sleep(0.15)          # their thread pools spin a while after they return
        times = median_times(columns, options.min_time)
        times.update(library_times)
        row.update(seconds=times, gflops={k: case.flops / t / 1e9 for k, t in times.items()}, rel_err=errors)
        row["ftuner_pct_peak"] = 100 * row["gflops"]["ftuner"] / limits.peak(sweep.dtype)
        rows.append(row)
        log(format_row(sweep, row))
    result = dict(name=sweep.name, title=sweep.title, dynamic_compile_s=dynamic_compile, rows=rows)
    if padded is not None:
        result["padded_compile_s"] = sum(padded.cache.seconds.values())
        result["padded_kernels"] = len(padded.cache.kernels)
    if static is not None:
        result["static_compile_s"] = sum(static.seconds.values())
    return result


COLUMNS = ("ftuner", "frozen", "numpy", "torch", "padded", "static")


def format_header() -> str:
    cols = " ".join(f"{c:>8}" for c in COLUMNS)
    return f"{'sweep':<11} {'x':>4} {'dims':<22} {cols} {'%peak':>6} {'vs np':>6} {'vs st':>6} {'pad%':>6} {'err':>8}"


def format_row(sweep, row) -> str:
    g = row["gflops"]
    cols = " ".join(f"{g[c]:8.1f}" if c in g else f"{'-':>8}" for c in COLUMNS)
    dims = ",".join(f"{k}={v}" for k, v in row["dims"].items())
    vs_static = f"{g['ftuner'] / g['static']:6.2f}" if "static" in g else f"{'-':>6}"
    vs_numpy = f"{g['ftuner'] / g['numpy']:6.2f}" if "numpy" in g else f"{'-':>6}"
    waste = f"{100 * row['padded_waste']:6.1f}" if "padded_waste" in row else f"{'-':>6}"
    worst = max(row["rel_err"].values())
    return (f"{sweep.name:<11} {row['x']:>4} {dims:<22} {cols} {row['ftuner_pct_peak']:6.1f} "
            f"{vs_numpy} {vs_static} {waste} {worst:8.1e}")


def machine() -> dict:
    """What a reader of bench.json needs to compare runs: the CPU, the date, the code."""
    import datetime
    import platform

    from ..version import git_commit, package_version, wheel_versions
    model = next((line.split(":", 1)[1].strip() for line in _cpuinfo().splitlines()
                  if line.startswith("model name")), platform.processor())
    return {"cpu": model, "platform": platform.platform(), "python": platform.python_version(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "commit": git_commit(), "ftuner_mlir": package_version(), "wheels": wheel_versions()}


def _cpuinfo() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return f.read()
    except OSError:
        return ""


def run_benchmark(options, log=print) -> dict:
    """All requested sweeps; writes bench.json and bench.png under options.out. Returns the payload.
    The peak is the best of many short runs: on a shared machine, noise only ever lowers it."""
    from pathlib import Path

    import ftuner_mlir
    from . import library_worker, peak, report, single_thread

    target = ftuner_mlir.parse_target(options.target)
    dtype = getattr(options, "dtype", "f32")
    log(f"target: {target.describe()}")
    limits = peak.measure(target, bf16=dtype == "bf16")
    log(f"machine limits (MLIR kernels): fp32 FMA peak {limits.fma_gflops:.1f} GFLOP/s, "
        f"memory bandwidth {limits.bandwidth_gbs:.1f} GB/s" +
        (f", {limits.bf16_engine} peak {limits.bf16_gflops:.1f} GFLOP/s (one core's x {target.cores})"
         if limits.bf16_gflops else ""))
    builders = {"dense": lambda: workloads.dense(options.t).in_dtype(dtype),
                "bmm_tx64xt": lambda: workloads.bmm_tall().in_dtype(dtype),
                "bmm_txtx64": lambda: workloads.bmm_wide().in_dtype(dtype),
                "odd": lambda: workloads.odd(options.odd_count).in_dtype(dtype)}
    compile_fn = lambda text: ftuner_mlir.compile(text, target)   # noqa: E731
    interpreters = {"numpy": sys.executable} if dtype == "f32" else {}     # numpy has no bf16 matmul
    torch_python = library_worker.find_python(getattr(options, "torch_python", None)) if options.torch else None
    if options.torch and torch_python is None:
        log("PyTorch is not installed: no torch column (pip install -e .[torch], or --torch-python PATH)")
    elif torch_python:
        interpreters["torch"] = torch_python
    log(f"library columns, each measured in its own process: {interpreters}")
    results = []
    for name in options.sweeps:
        sweep = builders[name]()
        libraries = {lib: library_worker.LibraryColumn(python, library_worker.request_for(lib, name, options))
                     for lib, python in interpreters.items()}
        log(f"\n{sweep.title}\n{format_header()}")
        try:
            res = run_sweep(sweep, compile_fn, limits, options, log, libraries)
        finally:
            for column in libraries.values():
                column.close()
        res["summary"] = report.summary(res)
        results.append(res)
    log(report.format_summary(results))
    single = None
    if "dense" in options.sweeps and getattr(options, "single_thread", True):
        single = single_thread.run(builders["dense"](), target, options, log)
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    payload = dict(target=target.__dict__, limits=limits.as_dict(), sweeps=results, single_thread=single,
                   machine=machine(),
                   options={k: v for k, v in vars(options).items() if k != "run"})
    report.write_json(out / "bench.json", payload)
    wrote_png = report.write_png(out / "bench.png", results, limits)
    log(f"\nwrote {out / 'bench.json'}" + (f" and {out / 'bench.png'}" if wrote_png else
                                          " (no PNG: pip install matplotlib)"))
    return payload
