"""Phase 1 of ftuner-lower-cpu, on tensors: constants folded, the calling convention, graph clean-ups."""
from __future__ import annotations

import dataclasses

from ...lowering.graph import abi, aggregates, broadcasts, constant_generics, dead_results, safe_indexing
from ..base import ModulePass


@dataclasses.dataclass(frozen=True)
class FoldConstantGenerics(ModulePass):
    name = "ftuner-fold-constant-generics"
    summary = "Generics that read only constants computed at compile time (a transposed weight becomes a constant)"

    def apply(self, module_op) -> None:
        constant_generics.fold_constant_generics(module_op)


@dataclasses.dataclass(frozen=True)
class DestinationAbi(ModulePass):
    name = "ftuner-destination-abi"
    summary = "Public functions take their results' buffers as arguments and return a status (the runtime's C ABI)"

    def apply(self, module_op) -> None:
        abi.convert_public_functions(module_op)


@dataclasses.dataclass(frozen=True)
class SkipIdentityBroadcasts(ModulePass):
    name = "ftuner-skip-identity-broadcasts"
    summary = "Dynamic broadcasts that are copies at run time (torch-mlir's expand of a same-size dim) read their input"

    def apply(self, module_op) -> None:
        broadcasts.skip_identity_broadcasts(module_op)


@dataclasses.dataclass(frozen=True)
class ClampExtractIndices(ModulePass):
    name = "ftuner-clamp-extract-indices"
    summary = "Data-dependent reads (embedding lookups) clamped into their tensor's bounds"

    def apply(self, module_op) -> None:
        safe_indexing.clamp_extract_indices(module_op)


@dataclasses.dataclass(frozen=True)
class DecomposeAggregates(ModulePass):
    name = "ftuner-decompose-aggregates"
    summary = "linalg.softmax as its parts (max, sub, exp, sum, div), so they fuse and vectorize"

    def apply(self, module_op) -> None:
        aggregates.decompose_aggregates(module_op)


@dataclasses.dataclass(frozen=True)
class DropUnusedResults(ModulePass):
    name = "ftuner-drop-unused-results"
    summary = "Results of generics that nothing reads (softmax's argmax) dropped with their computation"

    def apply(self, module_op) -> None:
        dead_results.drop_unused_results(module_op)


PASSES = [FoldConstantGenerics, DestinationAbi, SkipIdentityBroadcasts, ClampExtractIndices, DecomposeAggregates, DropUnusedResults]
