"""The benchmark's parts on small sizes: workloads, the padding baseline, the peak kernels, the report."""
import json
import types

import numpy as np

import ftuner_mlir
from ftuner_mlir.bench import peak, report, workloads
from ftuner_mlir.bench.baselines import Padded
from ftuner_mlir.bench.measure import median_times
from ftuner_mlir.bench.run import run_sweep
from ftuner_mlir.hardware import detect_host


def test_sweeps_match_the_paper():
    d = workloads.dense(range(1, 129))
    assert len(d.cases) == 128 and d.cases[0].shapes == ((16, 768), (2304, 768))
    assert d.cases[-1].flops == 2.0 * 2048 * 2304 * 768
    assert [c.x for c in workloads.bmm_tall().cases] == [5, 24, 43, 62, 81, 100, 119, 128]
    assert workloads.bmm_wide().cases[1].shapes == ((192, 24, 24), (192, 24, 64))
    odd = workloads.odd(8)
    assert odd.cases == workloads.odd(8).cases                 # the same shapes every run
    for c in odd.cases:
        assert all(v == 1 or v in workloads.PRIMES_TO_2048 for v in c.dims.values())


def test_padded_baseline_is_correct_and_counts_waste(rng):
    sweep = workloads.odd(1).with_cases([(0, dict(m=5, n=70, k=3))])
    case = sweep.cases[0]
    padded = Padded(sweep, ftuner_mlir.compile)
    assert padded.bucket(case) == dict(m=64, n=128, k=64)
    assert abs(padded.wasted_fraction(case) - (64 * 128 * 64) / (5 * 70 * 3) + 1) < 1e-12
    a, b = (rng.standard_normal(s, dtype=np.float32) for s in case.shapes)
    out = padded.runner(case, [a, b])()
    assert out.shape == (5, 70)
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def test_peak_kernels_compute_what_they_claim():
    target = detect_host()
    lanes = target.lanes(32)
    count = peak.chains(target)
    fma = ftuner_mlir.compile(peak.fma_kernel(lanes, count), target)
    x = np.full((3, lanes), 0.5, np.float32)
    y = fma(x, np.empty(10, np.float32))
    expected = 0.5
    for _ in range(10):
        expected = expected * 0.999999 + 0.000001
    np.testing.assert_allclose(y, np.float32(count * expected), rtol=1e-5)   # the chains' sum
    stream = ftuner_mlir.compile(peak.stream_kernel(lanes), target)
    a = np.random.default_rng(0).random((3, 4 * lanes), dtype=np.float32)
    np.testing.assert_array_equal(stream(a), 2 * a)


def test_run_sweep_and_report(tmp_path):
    sweep = workloads.odd(1).with_cases([(0, dict(m=17, n=33, k=9)), (1, dict(m=1, n=2, k=3))])
    options = types.SimpleNamespace(static=True, padded=True, torch=False, seed=0, min_time=0.002)
    limits = peak.MachineLimits(100.0, 10.0)
    res = run_sweep(sweep, ftuner_mlir.compile, limits, options, log=lambda _: None)
    res["summary"] = report.summary(res)
    assert res["summary"]["max_rel_err"] < 1e-5
    assert set(res["rows"][0]["gflops"]) == {"ftuner", "numpy", "padded", "static"}
    assert res["summary"]["ftuner_padded_work_max"] == 0.0
    report.write_json(tmp_path / "b.json", {"sweeps": [res]})
    assert json.loads((tmp_path / "b.json").read_text())["sweeps"][0]["rows"][1]["dims"] == dict(m=1, n=2, k=3)
    assert report.write_png(tmp_path / "b.png", [res], limits)
    assert (tmp_path / "b.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "vs numpy" in report.format_summary([res])


def test_dense_sweep_has_a_prepacked_column():
    sweep = workloads.dense([1, 3])
    options = types.SimpleNamespace(static=False, padded=False, torch=False, seed=0, min_time=0.002)
    res = run_sweep(sweep, ftuner_mlir.compile, peak.MachineLimits(100.0, 10.0), options, log=lambda _: None)
    res["summary"] = report.summary(res)
    for row in res["rows"]:
        assert set(row["gflops"]) == {"ftuner", "frozen", "numpy"} and row["rel_err"]["frozen"] < 1e-5
    assert set(res["summary"]["frozen_over"]) == {"ftuner", "numpy"}
    assert "weight prepacked (freeze_arguments): vs ftuner" in report.format_summary([res])
    options.frozen = False
    res = run_sweep(sweep, ftuner_mlir.compile, peak.MachineLimits(100.0, 10.0), options, log=lambda _: None)
    assert "frozen" not in res["rows"][0]["gflops"]


def test_median_times():
    times = median_times({"a": lambda: sum(range(100)), "b": lambda: None}, min_time=0.01)
    assert set(times) == {"a", "b"} and all(t > 0 for t in times.values())


def test_single_thread_section_is_checked_and_relative_to_one_core():
    from ftuner_mlir.bench import single_thread
    sweep = workloads.dense([1, 3])              # T=1 is one of single_thread.DEFAULT_T, 3 is not
    options = types.SimpleNamespace(seed=0, min_time=0.01)
    lines = []
    res = single_thread.run(sweep, detect_host(), options, log=lines.append)
    assert [row["x"] for row in res["rows"]] == [1]
    row = res["rows"][0]
    assert row["rel_err"] < 1e-5 and row["gflops"] > 0
    assert abs(row["pct_peak"] - 100 * row["gflops"] / res["core_peak_gflops"]) < 1e-9
    assert "single thread" in lines[0] and "of one core's peak" in lines[1]
    none_listed = single_thread.run(workloads.dense([2, 3]), detect_host(), options, log=lambda _: None)
    assert [row["x"] for row in none_listed["rows"]] == [2, 3]      # the first and last case instead


def test_operands_are_64_byte_aligned(rng):
    """Every column gets 64-byte aligned operands (torch's alignment), fresh values each case, in the
    sweep's dtype; outputs are poisoned and aligned too."""
    for sweep in (workloads.dense((1, 3)).in_dtype("bf16"), workloads.bmm_tall(), workloads.odd(3)):
        for case in sweep.cases:
            arrays = sweep.inputs(case, rng)
            assert [a.shape for a in arrays] == [tuple(s) for s in case.shapes]
            assert all(a.ctypes.data % 64 == 0 and np.isfinite(a.astype(np.float32)).all() for a in arrays)
            assert arrays[0].dtype.name == ("bfloat16" if sweep.dtype == "bf16" else "float32")
            assert float(np.abs(arrays[0].astype(np.float32)).max()) > 0
    out = workloads.aligned_output((5, 7))
    assert out.ctypes.data % 64 == 0 and np.isnan(out).all()
