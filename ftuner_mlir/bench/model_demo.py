"""`ftuner demo --model bert|bert-large|gpt2`: a transformers model (random weights from its config,
nothing downloaded) compiled once with a dynamic sequence length, run for the paper's T values, each
output checked against torch eager and timed side by side with it in this process."""
from __future__ import annotations

import time

from . import report

MODELS = ("bert", "bert-large", "gpt2", "roberta", "distilbert", "t5-encoder", "t5",    # transformer_models.py builds them
          "llama", "vit", "resnet", "convnext", "wav2vec2")
PAPER_T = (5, 24, 43, 62, 81, 100, 119, 128)
# the sizes measured by default: text the paper's T, images their side, audio its samples (16 kHz)
DEFAULT_SIZES = {"vit": (96, 160, 224, 288, 384), "resnet": (96, 160, 224, 288, 384),
                 "convnext": (96, 160, 224, 288, 384),
                 "wav2vec2": (8000, 16000, 24000, 32000, 48000)}
SIZE_NAMES = {"vit": "image side", "resnet": "image side", "convnext": "image side", "wav2vec2": "samples"}
EXPORT_SIZE = {"text": 24, "vit": (160, 192), "resnet": (160, 192), "convnext": (160, 192), "wav2vec2": 16000}   # what torch.export traces
TOLERANCE = 1e-4             # max |ftuner - torch| / max |torch|


def sizes_of(kind: str, ts=None) -> tuple:
    """The sizes measured for `kind`: `ts` where given (T, an image side or samples), else its default."""
    return tuple(ts) if ts else DEFAULT_SIZES.get(kind, PAPER_T)


def _mlir_size(source_bytes) -> str:
    return "from the module cache" if source_bytes is None else f"{source_bytes / 2**20:.0f} MiB of MLIR"


def build_and_compile(kind: str, depth: int | None, batch: int, ts, seed: int, config: dict | None = None,
                      profile: bool = False, matmul_precision: str = "f32"):
    """The model (random weights from its config, `config` overriding fields; depth: layers, None: the
    config's) and its one ftuner compilation with a dynamic size (T, image sides, samples):
    (module, config, compiled, seconds)."""
    import ftuner_mlir.torch as ftorch      # first: torch then shares the compiled code's OpenMP runtime

    from .transformer_models import build, example_and_dims, layer_overrides

    module, cfg = build(kind, seed, **{**(config or {}), **layer_overrides(kind, depth)})
    example, dims = example_and_dims(kind, cfg, batch, ts, seed)
    started = time.perf_counter()
    compiled = ftorch.compile(module, example, dynamic_shapes=dims, profile=profile, matmul_precision=matmul_precision)
    return module, cfg, compiled, time.perf_counter() - started


def relative_error(got, want) -> float:
    return float((got - want).abs().max() / want.abs().max())


def run(kind: str, depth: int | None, batch: int, ts, min_time: float, seed: int, profile: bool = False,
        config: dict | None = None) -> dict:
    """depth: the number of layers (None: the config's); config: fields overriding the model's config.
    With `profile`, the module is compiled with clocks and each T also prints where ftuner's time went,
    by kind of op (Executable.profile)."""
    import ftuner_mlir.torch  # noqa: F401  before torch: torch and the timed compiled code share one OpenMP
    import torch

    from .. import compiler
    from .measure import median_times
    from .transformer_models import hidden, inputs, layers

    module, config, compiled, total = build_and_compile(kind, depth, batch, ts, seed, config, profile=profile)
    depth = layers(config)
    t = compiled.timings
    print(f"{kind}: {depth} layers, hidden {hidden(config)}, batch {batch}, "
          f"random weights; compiled once in {total:.1f} s (torch.export {t['export_s']:.1f} s, torch-mlir "
          f"{t['import_s']:.1f} s, ftuner {t['compile_s']:.1f} s; {_mlir_size(compiled.source_bytes)})")
    print(f"{'T':>4} {'ftuner ms':>10} {'torch ms':>9} {'torch/ftuner':>12} {'max rel.err':>11}")
    rows, failures = [], 0
    with torch.no_grad():
        for length, ids in zip(ts, inputs(kind, config, batch, ts, seed)):
            err = relative_error(compiled(ids), module(ids))
            failures += not err <= TOLERANCE
            times = median_times({"torch": lambda: module(ids), "ftuner": lambda: compiled(ids)}, min_time)
            rows.append({"T": length, "ftuner_s": times["ftuner"], "torch_s": times["torch"], "rel_err": err})
            print(f"{length:>4} {times['ftuner'] * 1e3:>10.2f} {times['torch'] * 1e3:>9.2f} "
                  f"{times['torch'] / times['ftuner']:>12.2f} {err:>11.1e}{'' if err <= TOLERANCE else '  WRONG'}")
            if profile:
                found = compiled.executable.profile(ids.numpy(), calls=3, function="main")
                rows[-1]["profile_s"] = found.by_kind
                print("      " + ", ".join(f"{k} {v / found.total:.0%}" for k, v in found.by_kind.items()))
    if profile:
        print(f"where the time went at T={ts[-1]}:\n{found.table()}")
    builds = compiler.compilations + compiler.cache_loads
    print(f"modules compiled or loaded in this process: {builds} (one serves every T)")
    geomean = report.geomean([r["torch_s"] / r["ftuner_s"] for r in rows])
    print(f"geomean torch/ftuner {geomean:.2f} (above 1: ftuner faster); "
          f"{'all outputs match torch' if not failures else f'{failures} outputs differ from torch'} "
          f"(tolerance {TOLERANCE:g})")
    return {"model": kind, "layers": depth, "batch": batch, "timings": dict(t, total_s=total),
            "mlir_bytes": compiled.source_bytes, "rows": rows, "geomean_torch_over_ftuner": geomean,
            "failures": failures, "modules": builds}
