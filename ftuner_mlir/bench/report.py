"""The benchmark's outputs: geomean ratios, the JSON file with every figure, the PNG plot."""
from __future__ import annotations

import json
import math
from pathlib import Path


def geomean(values) -> float:
    values = [v for v in values if v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def summary(sweep_result: dict) -> dict:
    """Geomean and worst ratio of ftuner's speed over each other column, plus correctness and padding."""
    rows = sweep_result["rows"]
    return {
        "ftuner_over": _ratios(rows, "ftuner", ("numpy", "torch", "padded", "static")),
        "frozen_over": _ratios(rows, "frozen", ("ftuner", "numpy", "torch")),
        "ftuner_pct_peak_geomean": geomean([r["ftuner_pct_peak"] for r in rows]),
        "max_rel_err": max(max(r["rel_err"].values()) for r in rows),
        "ftuner_padded_work_max": max(r["ftuner_padded_work"] for r in rows),
        "bucket_padding_waste_max": max((r["padded_waste"] for r in rows if "padded_waste" in r), default=None),
    }


def _ratios(rows, ours: str, columns) -> dict:
    """column -> geomean and worst of `ours`' speed over the column's, where a row has both."""
    ratios = {}
    for col in columns:
        values = [r["gflops"][ours] / r["gflops"][col] for r in rows if col in r["gflops"] and ours in r["gflops"]]
        if values:
            ratios[col] = {"geomean": geomean(values), "min": min(values)}
    return ratios


def format_summary(results: list[dict]) -> str:
    lines = ["", "geomean ratios, ftuner speed / column speed (> 1: ftuner faster), worst case in brackets:"]
    for res in results:
        s = res["summary"]
        parts = [f"vs {col} {r['geomean']:.2f}x ({r['min']:.2f})" for col, r in s["ftuner_over"].items()]
        lines.append(f"  {res['name']:<11} {'; '.join(parts)}; {s['ftuner_pct_peak_geomean']:.0f}% of peak; "
                     f"max rel. err {s['max_rel_err']:.1e}; ftuner padded work <= "
                     f"{100 * s['ftuner_padded_work_max']:.1f}%")
        if s["frozen_over"]:
            parts = [f"vs {col} {r['geomean']:.2f}x ({r['min']:.2f})" for col, r in s["frozen_over"].items()]
            lines.append(f"  {'':<11} weight prepacked (freeze_arguments): {'; '.join(parts)}")
        extra = [f"compiled once in {res['dynamic_compile_s']:.2f} s"]
        if "static_compile_s" in res:
            extra.append(f"per-shape static kernels: {res['static_compile_s']:.1f} s for {len(res['rows'])}")
        if "padded_compile_s" in res:
            extra.append(f"buckets: {res['padded_kernels']} kernels in {res['padded_compile_s']:.1f} s, "
                         f"up to {100 * s['bucket_padding_waste_max']:.0f}% wasted work")
        lines.append("              " + "; ".join(extra))
    return "\n".join(lines)


def write_json(path: Path, payload: dict) -> None:
    path.write_text(json.dumps(payload, indent=1, default=float))


def write_png(path: Path, results: list[dict], limits) -> bool:
    """GFLOP/s against the sweep's x axis, one line per column, the measured FMA peak dashed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    cols = min(2, len(results))
    rows_n = -(-len(results) // cols)
    fig, axes = plt.subplots(rows_n, cols, figsize=(7.5 * cols, 4.6 * rows_n), squeeze=False)
    for ax in axes.flat[len(results):]:
        ax.set_visible(False)
    styles = {"ftuner": ("C3", "-", 2.4), "frozen": ("C4", "-", 1.4), "numpy": ("C0", "-", 1.4), "torch": ("C2", "-", 1.4),
              "padded": ("C1", "--", 1.4), "static": ("C7", ":", 1.8)}
    for ax, res in zip(axes.flat, results):
        rows = res["rows"]
        xs = [r["x"] for r in rows]
        for col, (color, ls, lw) in styles.items():
            ys = [r["gflops"].get(col) for r in rows]
            if any(y is not None for y in ys):
                ax.plot(xs, ys, color=color, linestyle=ls, linewidth=lw, marker="o" if len(xs) < 20 else None,
                        markersize=3, label=col)
        ax.axhline(limits.fma_gflops, color="k", linestyle="--", linewidth=0.8, label="FMA peak")
        ax.set_title(res["title"], fontsize=10)
        ax.set_xlabel("case" if res["name"] == "odd" else "T")
        ax.set_ylabel("GFLOP/s (fp32)")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
