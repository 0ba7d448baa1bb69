"""From loops to the LLVM dialect: upstream pipelines, and the check that nothing else is left."""
from __future__ import annotations

from ...ir.diagnostics import PassFailure, location_of
from ...ir.walk import ops_where


def loops_pipeline() -> list[str]:
    """Vector transfers and linalg ops to loops of loads and stores; strided metadata made explicit."""
    return ["convert-vector-to-scf{full-unroll=true}", "convert-linalg-to-loops", "lower-affine",
            "expand-strided-metadata", "lower-affine"]


def llvm_pipeline(openmp: bool, transpose_lowering: str, amx: bool = False, x86vector: bool = False) -> list[str]:
    """From loops to the LLVM dialect. `transpose_lowering`: the target ISA's vector.transpose lowering
    (hardware.cpu's ISA table). With `x86vector`, the vector conversion lowers the x86vector dialect's
    ops too (AVX512-BF16's dot products). With `amx`, the generic conversion of the amx and cf dialects runs
    before the control flow's own (and the memref dialect's, for the bounds the vector lowering reads after
    finalize-memref-to-llvm ran): the AMX uKernels carry tiles through their loops (block arguments
    of `!amx.tile` type), which only a type converter assembled with the amx dialect's knows. (Left
    unfiltered, it would also lower ops ftuner-lower-cpu refuses, complex.abs say.)"""
    # finalize-memref-to-llvm before convert-scf-to-cf: OpenMP regions hold memref.alloca_scope ops
    # that need single-block bodies when they are lowered.
    stages = [
        "finalize-memref-to-llvm", "convert-scf-to-cf",
        f"convert-vector-to-llvm{{vector-contract-lowering=outerproduct "
        f"vector-transpose-lowering={transpose_lowering}{' enable-x86vector=true' if x86vector else ''}}}", "convert-math-to-llvm", "convert-math-to-libm",
        "convert-arith-to-llvm", "convert-index-to-llvm", "convert-func-to-llvm",
    ] + _late_conversion(amx, x86vector) + ["convert-cf-to-llvm"]
    if openmp:
        stages.append("convert-openmp-to-llvm")
    return stages + ["convert-ub-to-llvm", "reconcile-unrealized-casts"]


def _late_conversion(amx: bool, x86vector: bool) -> list[str]:
    """The bf16 engines' code: with AMX, its dialect's conversion (see llvm_pipeline); with either, the
    memref ops the vector lowering made after finalize-memref-to-llvm (the bounds of masked reads)."""
    if not (amx or x86vector):
        return []
    return [f"convert-to-llvm{{filter-dialects={'amx,' if amx else ''}cf,memref}}"]


# What may remain once the CPU pipeline is done: LLVM ops, and OpenMP ops (mlir-translate turns them
# into runtime calls).
FINAL_DIALECTS = ("llvm", "omp")


def check_llvm_dialect(module_op) -> None:
    """Every op left outside the LLVM dialect is a located error (translation would fail, or abort, on
    it). The casts a partial conversion leaves are symptoms: named only when nothing else is left."""
    left = ops_where(module_op, lambda op: op.name.split(".", 1)[0] not in FINAL_DIALECTS)
    causes = [op for op in left if op.operation.name != "builtin.unrealized_conversion_cast"] or left
    if causes:
        more = f" ({len(causes) - 1} more ops are left too)" if len(causes) > 1 else ""
        raise PassFailure(location_of(causes[0]), f"'{causes[0].operation.name}' was not lowered to the LLVM "
                                                  f"dialect: ftuner-lower-cpu has no lowering for it{more}")
