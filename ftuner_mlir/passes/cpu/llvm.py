"""Phase 5 of ftuner-lower-cpu: loops, outlined loop nests, asserts and the ABI table, the LLVM dialect."""
from __future__ import annotations

import dataclasses

from ...lowering.graph import abi
from ...lowering.llvm import asserts, bf16_memory, llvm_target, merge_functions, narrow_types, outline, pipelines, strided_copies
from ..base import ModulePass


@dataclasses.dataclass(frozen=True)
class StridedCopiesAsLoops(ModulePass):
    name = "ftuner-strided-copies-as-loops"
    summary = "Strided memref.copy as loops that vectorize (not MLIR's element-at-a-time runtime helper)"

    def apply(self, module_op) -> None:
        strided_copies.copies_as_loops(module_op)


@dataclasses.dataclass(frozen=True)
class OutlineLoopNests(ModulePass):
    name = "ftuner-outline-loop-nests"
    summary = "Top-level loop nests of the public functions outlined into functions (LLVM optimizes each alone)"

    def apply(self, module_op) -> None:
        outline.outline_top_level_loops(module_op)


@dataclasses.dataclass(frozen=True)
class MergeIdenticalFunctions(ModulePass):
    name = "ftuner-merge-identical-functions"
    summary = "Private functions with identical bodies merged into one"

    def apply(self, module_op) -> None:
        merge_functions.merge_identical_functions(module_op)


@dataclasses.dataclass(frozen=True)
class StoreI1AsI8(ModulePass):
    name = "ftuner-store-i1-as-i8"
    summary = "Boolean buffers stored as bytes (the layout numpy and torch use)"

    def apply(self, module_op) -> None:
        narrow_types.store_i1_as_i8(module_op)


@dataclasses.dataclass(frozen=True)
class ReportFailedAsserts(ModulePass):
    name = "ftuner-report-failed-asserts"
    summary = "A failed cf.assert returns its message's number as the call's status (no abort)"

    def apply(self, module_op) -> None:
        asserts.report_failed_asserts(module_op)


@dataclasses.dataclass(frozen=True)
class RecordAbiTable(ModulePass):
    name = "ftuner-record-abi-table"
    summary = "The public functions' buffers (dims, element bits) recorded in the library as @ftuner_abi"

    def apply(self, module_op) -> None:
        abi.record_abi_table(module_op)


@dataclasses.dataclass(frozen=True)
class Bf16MemoryAsI16(ModulePass):
    name = "ftuner-bf16-memory-as-i16"
    summary = "Every LLVM load and store of bf16 made one of i16 (LLVM would widen through __truncsfbf2)"

    def apply(self, module_op) -> None:
        bf16_memory.bf16_memory_as_i16(module_op)


@dataclasses.dataclass(frozen=True)
class KeepOutOfLine(ModulePass):
    name = "ftuner-keep-out-of-line"
    summary = "Outlined functions never inlined back, and internal"

    def apply(self, module_op) -> None:
        outline.keep_out_of_line(module_op)


@dataclasses.dataclass(frozen=True)
class CheckLlvmDialect(ModulePass):
    name = "ftuner-check-llvm-dialect"
    summary = "Every op left outside the LLVM and OpenMP dialects is a located error"

    def apply(self, module_op) -> None:
        pipelines.check_llvm_dialect(module_op)


@dataclasses.dataclass(frozen=True)
class AnnotateLlvmTarget(ModulePass):
    name = "ftuner-annotate-llvm-target"
    summary = "The target triple on the module; the target CPU and its features on every function"

    def apply(self, module_op) -> None:
        llvm_target.annotate(module_op, self.resolved_target())


PASSES = [StridedCopiesAsLoops, OutlineLoopNests, MergeIdenticalFunctions, StoreI1AsI8, ReportFailedAsserts, RecordAbiTable,
          Bf16MemoryAsI16, KeepOutOfLine, CheckLlvmDialect, AnnotateLlvmTarget]
