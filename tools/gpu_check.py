#!/usr/bin/env python3
"""Device check: correctness and speed of the exported GPU modules against cuBLAS, in one run.

Prepare here (needs the MLIR wheels):   bash tools/gpu-check.sh prepare       -> gpu-export/
Run on the GPU machine (torch + CUDA):  python3 tools/gpu_check.py gpu-export [--quick]

Dense X[16T x 768] . W[2304 x 768]^T for T = 1..128 and BatchMatmul [192,T,64]x[192,64,T] and
[192,T,T]x[192,T,64] for T in {5, 24, 43, 62, 81, 100, 119, 128}: every result compared with torch in
float64 (relative error < 1e-4, output poisoned with NaN first); time against torch.matmul (cuBLAS,
fp32, TF32 off). Both sides timed the same way: CUDA events around `reps` back-to-back calls after a
warm-up, median of 5 such rounds. Prints a table and geomean ratios; writes $OUT/gpu_check.json if
$OUT is set.
"""
import json
import math
import os
import statistics
import sys
from pathlib import Path

BMM_T = (5, 24, 43, 62, 81, 100, 119, 128)


def timed(torch, fn, reps=20, rounds=5):
    fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(rounds):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        torch.cuda.synchronize()
        samples.append(start.elapsed_time(end) / 1e3 / reps)
    return statistics.median(samples)


def check(torch, fn, ref_fn, args, out_shape):
    out = torch.full(out_shape, float("nan"), device="cuda")
    fn(*args, out=out)
    torch.cuda.synchronize()
    ref = ref_fn(*[a.double() for a in args])
    err = (torch.linalg.norm(out.double() - ref) / torch.linalg.norm(ref)).item()
    return err if math.isfinite(err) else float("inf")


def main(argv):
    try:
        import torch
    except ImportError:
        sys.exit("gpu_check needs PyTorch with CUDA (the GPU machine's python3 has it)")
    if not torch.cuda.is_available():
        sys.exit("gpu_check: no CUDA device visible to torch")
    root = Path(argv[0] if argv and not argv[0].startswith("-") else "gpu-export")
    quick = "--quick" in argv
    sys.path.insert(0, str(root / "dense"))
    import ftuner_export
    dense = ftuner_export.load(root / "dense")["dense"]
    bmm = ftuner_export.load(root / "bmm")["batch_matmul"]
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}; TF32 off")
    rows = []
    gen = torch.Generator(device="cuda").manual_seed(0)
    w = torch.randn(2304, 768, device="cuda", generator=gen)
    cases = [("dense", t) for t in (range(1, 129, 9) if quick else range(1, 129))]
    cases += [("bmm_tx64xt", t) for t in BMM_T] + [("bmm_txtx64", t) for t in BMM_T]
    for sweep, t in cases:
        if sweep == "dense":
            args = (torch.randn(16 * t, 768, device="cuda", generator=gen), w)
            fn, ref_fn, out_shape = dense, (lambda x, w_: x @ w_.T), (16 * t, 2304)
            flops = 2.0 * 16 * t * 2304 * 768
        else:
            m, k, n = (t, 64, t) if sweep == "bmm_tx64xt" else (t, t, 64)
            args = (torch.randn(192, m, k, device="cuda", generator=gen), torch.randn(192, k, n, device="cuda", generator=gen))
            fn, ref_fn, out_shape = bmm, torch.matmul, (192, m, n)
            flops = 2.0 * 192 * m * n * k
        err = check(torch, fn, ref_fn, args, out_shape)
        out = torch.empty(out_shape, device="cuda")
        ours = timed(torch, lambda: fn(*args, out=out))
        cublas = timed(torch, lambda: ref_fn(*args))
        rows.append(dict(sweep=sweep, t=t, rel_err=err, ours_s=ours, cublas_s=cublas,
                         ours_tflops=flops / ours / 1e12, cublas_tflops=flops / cublas / 1e12))
        r = rows[-1]
        print(f"{sweep:<11} T={t:<4} ours {r['ours_tflops']:7.2f} TFLOP/s  cuBLAS {r['cublas_tflops']:7.2f}  "
              f"ratio {cublas / ours:5.2f}  rel.err {err:.1e}{'' if err < 1e-4 else '  WRONG'}", flush=True)
    print()
    for sweep in ("dense", "bmm_tx64xt", "bmm_txtx64"):
        sel = [r for r in rows if r["sweep"] == sweep]
        geo = math.exp(sum(math.log(r["cublas_s"] / r["ours_s"]) for r in sel) / len(sel))
        print(f"{sweep:<11} geomean speed vs cuBLAS {geo:.2f}x over {len(sel)} shapes; "
              f"max rel. err {max(r['rel_err'] for r in sel):.1e}")
    bad = [r for r in rows if not r["rel_err"] < 1e-4]
    print("ALL CORRECT" if not bad else f"{len(bad)} WRONG RESULTS")
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "gpu_check.json").write_text(json.dumps(rows, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
