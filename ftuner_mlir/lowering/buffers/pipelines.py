"""Bufferization and parallelization: upstream pipelines, and the dispatch loops' schedule."""
from __future__ import annotations

from mlir import ir

from ...ir.attributes import DISPATCH_ATTR
from ...ir.walk import functions, walk


def cleanup_pipeline() -> list[str]:
    return ["canonicalize", "cse"]


def bufferize_pipeline() -> list[str]:
    """Tensors to buffers; private functions keep strided layouts so subviews pass without copies."""
    return [
        "empty-tensor-to-alloc-tensor",
        "one-shot-bufferize{bufferize-function-boundaries=1 "
        "function-boundary-type-conversion=fully-dynamic-layout-map}",
        "drop-equivalent-buffer-results",
    ]


def after_bufferize_pipeline() -> list[str]:
    """Row strips and uKernels are inlined into their dispatch (dispatch calls are kept: see
    dispatch_calls.py), then buffers are freed, each right after its last use: the ownership-based
    deallocation frees a buffer at the end of the block it was allocated in, so a whole model's
    intermediates stayed allocated to the end of the call (BERT-base bf16, batch 16, T = 128: peak RSS
    1.48-1.56 -> 1.19-1.27 GB; speed within the VM's noise. With one buffer per layer, as
    ftuner-split-empty-tensors made, the call was 1.6-1.8x slower: see docs/passes.md)."""
    return ["inline", "symbol-dce", "canonicalize", "cse", "buffer-deallocation-pipeline", "canonicalize",
            "func.func(optimize-allocation-liveness)"]


def parallel_pipeline(num_threads: int) -> list[str]:
    """scf.forall becomes an OpenMP parallel loop (or a sequential loop for one thread)."""
    if num_threads <= 1:
        return ["scf-forall-to-for"]
    return ["scf-forall-to-parallel", f"convert-scf-to-openmp{{num-threads={num_threads}}}"]


def balance_dispatch_loops(module_op) -> None:
    """The dispatch functions' OpenMP loops hand out their blocks dynamically: on a shared machine one
    core may run slower than the other (a busy sibling thread), and a static split then waits for it."""
    dynamic = ir.Attribute.parse("#omp<schedulekind dynamic>", module_op.context)
    for fn in functions(module_op):
        if DISPATCH_ATTR in fn.attributes:
            for op in walk(fn):
                if op.operation.name == "omp.wsloop":
                    op.attributes["schedule_kind"] = dynamic
