"""CPU lowering stages: vectorize the uKernels (transform dialect), then bufferize, parallelize, LLVM."""
from __future__ import annotations

import json

from mlir import ir
from mlir.dialects.transform import interpreter

from ..ir.codecs import PARALLEL_OUTER_ATTR
from ..ir.diagnostics import PassFailure, location_of
from ..ir.walk import functions, walk
from .dispatch_calls import DISPATCH_ATTR
from .parallel_generics import TILES_ATTR, guard_parallel_generics, tile_script
from .row_reductions import carry_row_accumulators

def transform_script(body: str) -> str:
    """A transform-dialect module whose entry sequence runs `body` on the payload root `%root`."""
    return ("module attributes {transform.with_named_sequence} {\n"
            "  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {\n"
            f"{body}"
            "    transform.yield\n  }\n}\n")


# The reduction loop of the full-width uKernels (the ones most of a matmul runs in) unrolled by this
# factor: its counter, branch and B-offset arithmetic then take one slot in four iterations' worth of
# FMAs instead of competing with them for the FMA ports every iteration (single-threaded 8x32, measured
# side by side: +5..12%; the remainder strips stay rolled, for compile time).
UKERNEL_K_UNROLL = 4

# Each uKernel: vectorize its zero fill if it has one (the first reduction block's uKernels start from
# zero instead of reading C), tile the reduction by 1, vectorize the static rows x cols x 1 contraction,
# and hoist the accumulator read/write out of the reduction loop so it stays in vector registers; then
# unroll the reduction loops of the full-width uKernels (ftuner.unroll_k).
VECTORIZE_UKERNELS = transform_script("""\
    %uks = transform.structured.match ops{["func.func"]} attributes{ftuner.ukernel} in %root
        : (!transform.any_op) -> !transform.any_op
    transform.foreach %uks : !transform.any_op {
    ^bb0(%fn: !transform.any_op):
      %fill = transform.structured.match ops{["linalg.fill"]} in %fn : (!transform.any_op) -> !transform.any_op
      transform.structured.vectorize %fill : !transform.any_op
      %mm = transform.structured.match ops{["linalg.matmul"]} in %fn : (!transform.any_op) -> !transform.any_op
      %step, %kloop = transform.structured.tile_using_for %mm tile_sizes [0, 0, 1]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.structured.vectorize %step {create_named_contraction} : !transform.any_op
      transform.apply_patterns to %fn { transform.apply_patterns.canonicalization } : !transform.any_op
      transform.loop.hoist_loop_invariant_subsets %kloop : !transform.any_op
      transform.apply_patterns to %fn { transform.apply_patterns.canonicalization } : !transform.any_op
    }
    transform.foreach %uks : !transform.any_op {
    ^bb0(%fn: !transform.any_op):
      %tr = transform.structured.match ops{["linalg.transpose"]} in %fn : (!transform.any_op) -> !transform.any_op
      transform.structured.vectorize %tr : !transform.any_op
    }
    %wide = transform.structured.match ops{["func.func"]} attributes{ftuner.unroll_k} in %root
        : (!transform.any_op) -> !transform.any_op
    transform.foreach %wide : !transform.any_op {
    ^bb0(%fn: !transform.any_op):
      %kloop = transform.structured.match ops{["scf.for"]} in %fn : (!transform.any_op) -> !transform.any_op
      transform.loop.unroll %kloop { factor = UNROLL } : !transform.any_op
    }
""".replace("UNROLL", str(UKERNEL_K_UNROLL)))

# Copies the emitters mark (conv2d's im2col) run over the cores: one task per index of their outermost
# dims (the attribute's value says how many: 1 or 2).
PARALLEL_COPIES = transform_script("".join(f"""\
    %copies{dims} = transform.structured.match ops{{["linalg.generic"]}}
        attributes{{{PARALLEL_OUTER_ATTR} = {dims} : i64}} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %copies{dims} : !transform.any_op {{
    ^bb0(%copy: !transform.any_op):
      %tiled, %loop = transform.structured.tile_using_forall %copy tile_sizes [{", ".join(["1"] * dims)}]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    }}
""" for dims in (1, 2)))


# Ops that are a composition of others (linalg.softmax: max, sub, exp, sum, div) become those ops.
AGGREGATED_OPS = ("linalg.softmax",)
DECOMPOSE_AGGREGATES = transform_script(f"""\
    %ops = transform.structured.match ops{{{json.dumps(list(AGGREGATED_OPS))}}} in %root
        : (!transform.any_op) -> !transform.any_op
    transform.foreach %ops : !transform.any_op {{
    ^bb0(%op: !transform.any_op):
      %parts = transform.structured.decompose_interface %op : (!transform.any_op) -> !transform.any_op
    }}
""")


def apply_script(script_text: str, module_op) -> None:
    script = ir.Module.parse(script_text, module_op.context)
    interpreter.apply_named_sequence(module_op, script.body.operations[0], script)


def decompose_aggregates(module_op) -> None:
    if any(op.operation.name in AGGREGATED_OPS for op in walk(module_op)):
        apply_script(DECOMPOSE_AGGREGATES, module_op)


def parallelize_copies(module_op) -> None:
    if any(PARALLEL_OUTER_ATTR in op.attributes for op in walk(module_op)):
        apply_script(PARALLEL_COPIES, module_op)


def parallelize_generics(module_op, vector_bits: int) -> None:
    """The public functions' big elementwise ops and reductions over the cores (parallel_generics.py),
    their rows as `vector_bits`-wide vector code where they can be (row_vectors.py)."""
    tile_lists = guard_parallel_generics(module_op)
    if tile_lists:
        apply_script(transform_script(tile_script(tile_lists)), module_op)
        carry_row_accumulators(module_op, TILES_ATTR, vector_bits)


def vectorize_ukernels(module_op) -> None:
    apply_script(VECTORIZE_UKERNELS, module_op)


def bufferize_pipeline() -> list[str]:
    """Tensors to buffers; private functions keep strided layouts so subviews pass without copies."""
    return [
        "canonicalize", "cse", "eliminate-empty-tensors", "empty-tensor-to-alloc-tensor",
        "one-shot-bufferize{bufferize-function-boundaries=1 "
        "function-boundary-type-conversion=fully-dynamic-layout-map}",
        "drop-equivalent-buffer-results",
    ]


def after_bufferize_pipeline() -> list[str]:
    """Row strips and uKernels are inlined into their dispatch (dispatch calls are kept: see
    dispatch_calls.py), then buffers are freed."""
    return ["inline", "symbol-dce", "canonicalize", "cse", "buffer-deallocation-pipeline", "canonicalize"]


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


def loops_pipeline() -> list[str]:
    """Vector transfers and linalg ops to loops of loads and stores; strided metadata made explicit."""
    return ["convert-vector-to-scf{full-unroll=true}", "convert-linalg-to-loops", "lower-affine",
            "expand-strided-metadata", "lower-affine"]


def llvm_pipeline(openmp: bool, transpose_lowering: str, amx: bool = False) -> list[str]:
    """From loops to the LLVM dialect. `transpose_lowering`: the target ISA's vector.transpose lowering
    (hardware.cpu's ISA table). With `amx`, the generic conversion of the amx and cf dialects runs
    before the control flow's own (and the memref dialect's, for the bounds the vector lowering reads after
    finalize-memref-to-llvm ran): the AMX uKernels carry tiles through their loops (block arguments
    of `!amx.tile` type), which only a type converter assembled with the amx dialect's knows. (Left
    unfiltered, it would also lower ops ftuner-lower-cpu refuses, complex.abs say.)"""
    # finalize-memref-to-llvm before convert-scf-to-cf: OpenMP regions hold memref.alloca_scope ops
    # that need single-block bodies when they are lowered.
    stages = [
        "finalize-memref-to-llvm", "convert-scf-to-cf",
        f"convert-vector-to-llvm{{vector-contract-lowering=outerproduct "
        f"vector-transpose-lowering={transpose_lowering}}}", "convert-math-to-llvm", "convert-math-to-libm",
        "convert-arith-to-llvm", "convert-index-to-llvm", "convert-func-to-llvm",
    ] + (["convert-to-llvm{filter-dialects=amx,cf,memref}"] if amx else []) + ["convert-cf-to-llvm"]
    if openmp:
        stages.append("convert-openmp-to-llvm")
    return stages + ["convert-ub-to-llvm", "reconcile-unrealized-casts"]


# What may remain once the CPU pipeline is done: LLVM ops, and OpenMP ops (mlir-translate turns them
# into runtime calls).
FINAL_DIALECTS = ("llvm", "omp")


def check_llvm_dialect(module_op) -> None:
    """Every op left outside the LLVM dialect is a located error (translation would fail, or abort, on
    it). The casts a partial conversion leaves are symptoms: named only when nothing else is left."""
    left = [op for op in walk(module_op) if op.operation.name.split(".", 1)[0] not in FINAL_DIALECTS]
    causes = [op for op in left if op.operation.name != "builtin.unrealized_conversion_cast"] or left
    if causes:
        more = f" ({len(causes) - 1} more ops are left too)" if len(causes) > 1 else ""
        raise PassFailure(location_of(causes[0]), f"'{causes[0].operation.name}' was not lowered to the LLVM "
                                                  f"dialect: ftuner-lower-cpu has no lowering for it{more}")
