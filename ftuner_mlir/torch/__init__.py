"""The PyTorch front end: compile a torch.nn.Module once, call it on tensors of any shape inside the
declared ranges (`pip install -e .[torch]`).

    import ftuner_mlir.torch
    compiled = ftuner_mlir.torch.compile(model, (ids,), dynamic_shapes=({1: torch.export.Dim("T", max=128)},))
    out = compiled(other_ids)                 # any T in range: no recompilation

    model = torch.compile(model, backend="ftuner", dynamic=True)    # the same, through TorchDynamo

Import this before torch: both then share one OpenMP runtime (openmp.py).
Route: torch.export (here) -> torch-mlir's linalg-on-tensors (a child process) -> ftuner_mlir.compile;
the module cache is keyed by the exported program (fingerprint.py), so a warm start skips torch-mlir.
"""
from __future__ import annotations

import time

from .openmp import share_runtime

share_runtime()           # before torch loads its own OpenMP runtime (openmp.py says why)

import torch  # noqa: E402

from .. import compiler  # noqa: E402
from ..backends.child_process import terminate_cleanly  # noqa: E402
from . import exporting  # noqa: E402
from .bf16_models import fp32_twin, is_bf16_model, widened  # noqa: E402
from .exporting import PinnedDims, UnsupportedModel  # noqa: E402
from .fingerprint import fingerprint  # noqa: E402
from .function import CompiledModule  # noqa: E402
from .weights import StaleWeights, WeightWatch, check_policy, module_tensors  # noqa: E402

__all__ = ["compile", "CompiledModule", "PinnedDims", "StaleWeights", "UnsupportedModel"]


def compile(module: torch.nn.Module, example_args: tuple, dynamic_shapes=None, *, example_kwargs=None,
            target: str = "host", on_weight_change: str = "raise", **options) -> CompiledModule:
    """Export `module` (eval mode, no gradients) with torch.export's `dynamic_shapes`, compile it once.
    `options` are ftuner_mlir.compile's (num_threads, opt_level, cache, timeout_s, ...), checked before
    anything runs. `on_weight_change`: what a call does when a parameter or buffer changed in place
    since ("raise", "recompile" or "ignore"; weights.py). A model cast to bf16 is compiled as its fp32
    twin with matmul_precision="bf16" (bf16_models.py): it takes and returns bf16 tensors."""
    if not isinstance(example_args, tuple):
        example_args = (example_args,)
    check_policy(on_weight_change)
    bf16 = is_bf16_model(module, example_args, example_kwargs)
    if bf16:
        options.setdefault("matmul_precision", "bf16")
    compiler.check_options(target, **options)
    watch = WeightWatch(module_tensors(module)) if on_weight_change != "ignore" else None

    def again() -> CompiledModule:
        return compile(module, example_args, dynamic_shapes, example_kwargs=example_kwargs, target=target,
                       on_weight_change=on_weight_change, **options)

    started = time.perf_counter()
    timings = {"export_s": 0.0, "key_s": 0.0, "import_s": 0.0}
    traced = fp32_twin(module) if bf16 else module
    if bf16:
        example_args, example_kwargs = widened((example_args, example_kwargs))

    def build(args, kwargs, importer):
        """(program, executable): the module exported at the example `args`, `kwargs` and compiled
        (or found in a cache), its shape rules checked against the declared ranges."""
        began = time.perf_counter()
        program = exporting.export(traced, args, kwargs, dynamic_shapes)
        exported = time.perf_counter()
        key = fingerprint(program)
        timings["export_s"] += exported - began
        timings["key_s"] += time.perf_counter() - exported

        def linalg() -> str:            # run only when neither this process nor the cache has the module
            began = time.perf_counter()
            text = exporting.to_linalg(program, folder, importer=importer)   # names the weights file in `folder`
            timings["import_s"] += time.perf_counter() - began
            timings["mlir_bytes"] = len(text)
            exporting.check_shapes(exporting.imported_rules(text), program, args, kwargs)
            return text

        executable = compiler.compile(linalg, target, source_key=key, **options)
        exporting.check_shapes(executable["main"].rules, program, args, kwargs)   # a cached module too
        return program, executable

    with terminate_cleanly(), exporting.import_folder() as folder, exporting.spare_importer() as importer:
        try:
            program, executable = build(example_args, example_kwargs, importer)
        except exporting.NarrowTrace as err:
            # the example took a branch that holds at its own sizes only: exported again at other sizes
            moved = exporting.general_example(err.program, example_args, example_kwargs, err.dims)
            if moved is None:
                raise
            try:
                program, executable = build(*moved, importer if importer.proc else None)
            except UnsupportedModel as again_err:     # narrow there too, or the model refuses those sizes
                shapes = [tuple(t.shape) for t in torch.utils._pytree.tree_leaves(moved) if isinstance(t, torch.Tensor)]
                raise exporting.NarrowTrace(f"{err} (exported again at input shapes {shapes}: "
                                            f"{type(again_err).__name__}: {str(again_err)[:300]})",
                                            err.dims, err.program) from None
    timings["compile_s"] = time.perf_counter() - started - timings["export_s"] - timings["key_s"] - timings["import_s"]
    return CompiledModule(executable, program, exporting.dim_ranges(program), timings.pop("mlir_bytes", None), timings,
                          watch=watch, on_weight_change=on_weight_change, again=again, bf16=bf16)


from . import dynamo  # noqa: E402,F401  registers backend="ftuner" with torch.compile
