"""The PyTorch front end: compile a torch.nn.Module once, call it on tensors of any shape inside the
declared ranges (`pip install -e .[torch]`).

    import ftuner_mlir.torch
    compiled = ftuner_mlir.torch.compile(model, (ids,), dynamic_shapes=({1: torch.export.Dim("T", max=128)},))
    out = compiled(other_ids)                 # any T in range: no recompilation

    model = torch.compile(model, backend="ftuner", dynamic=True)    # the same, through TorchDynamo

Import this before torch: both then share one OpenMP runtime (openmp.py).
Route: torch.export (here) -> torch-mlir's linalg-on-tensors (a child process) -> ftuner_mlir.compile.
"""
from __future__ import annotations

import time

from .openmp import share_runtime

share_runtime()           # before torch loads its own OpenMP runtime (openmp.py says why)

import torch  # noqa: E402

from .. import compiler  # noqa: E402
from ..backends.child_process import terminate_cleanly  # noqa: E402
from . import exporting  # noqa: E402
from .exporting import PinnedDims, UnsupportedModel  # noqa: E402
from .function import CompiledModule  # noqa: E402
from .weights import StaleWeights, WeightWatch, check_policy, module_tensors  # noqa: E402

__all__ = ["compile", "CompiledModule", "PinnedDims", "StaleWeights", "UnsupportedModel"]


def compile(module: torch.nn.Module, example_args: tuple, dynamic_shapes=None, *, example_kwargs=None,
            target: str = "host", on_weight_change: str = "raise", **options) -> CompiledModule:
    """Export `module` (eval mode, no gradients) with torch.export's `dynamic_shapes`, compile it once.
    `options` are ftuner_mlir.compile's (num_threads, opt_level, cache, timeout_s, ...), checked before
    anything runs. `on_weight_change`: what a call does when a parameter or buffer changed in place
    since ("raise", "recompile" or "ignore"; weights.py)."""
    if not isinstance(example_args, tuple):
        example_args = (example_args,)
    check_policy(on_weight_change)
    compiler.check_options(target, **options)
    watch = WeightWatch(module_tensors(module)) if on_weight_change != "ignore" else None

    def again() -> CompiledModule:
        return compile(module, example_args, dynamic_shapes, example_kwargs=example_kwargs, target=target,
                       on_weight_change=on_weight_change, **options)

    started = time.perf_counter()
    with terminate_cleanly():
        program = exporting.export(module, example_args, example_kwargs, dynamic_shapes)
        exported = time.perf_counter()
        source = exporting.to_linalg(program)
        imported = time.perf_counter()
        executable = compiler.compile(source, target, **options)
    timings = {"export_s": exported - started, "import_s": imported - exported,
               "compile_s": time.perf_counter() - imported}
    ranges = exporting.dim_ranges(program)
    exporting.check_dynamic_dims(executable["main"].rules, ranges)
    exporting.check_example(executable["main"], example_args, example_kwargs)
    return CompiledModule(executable, program, ranges, len(source), timings,
                          watch=watch, on_weight_change=on_weight_change, again=again)


from . import dynamo  # noqa: E402,F401  registers backend="ftuner" with torch.compile
