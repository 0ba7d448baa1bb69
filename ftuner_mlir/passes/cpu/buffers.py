"""Phase 4 of ftuner-lower-cpu: what runs on buffers (AMX bodies, in-place reshapes, profiling), then
the dispatch loops' schedule."""
from __future__ import annotations

import dataclasses

from ...codegen import bf16_matmul
from ...lowering.buffers import (amx_bodies, empty_tensors, expand_shapes, pipelines, profile, reshape_copies,
                                row_kernels)
from ...lowering.dispatch import dispatch_calls
from ...lowering.graph import abi
from ..base import ModulePass


@dataclasses.dataclass(frozen=True)
class SplitEmptyTensors(ModulePass):
    name = "ftuner-split-empty-tensors"
    summary = "One tensor.empty per user (CSE merged the layers' ones), so bufferization's analysis stays linear"

    def apply(self, module_op) -> None:
        empty_tensors.split_empty_tensors(module_op)


@dataclasses.dataclass(frozen=True)
class DropSelfCopies(ModulePass):
    name = "ftuner-drop-self-copies"
    summary = "A result computed in its out buffer is not copied onto itself"

    def apply(self, module_op) -> None:
        abi.drop_self_copies(module_op)


@dataclasses.dataclass(frozen=True)
class OutlineRowKernels(ModulePass):
    name = "ftuner-outline-row-kernels"
    summary = ("Row kernels of the public functions (an scf.if choosing a parallel or a serial row loop) as "
               "private functions, identical ones merged: the later passes see each layer's kernel once")

    def apply(self, module_op) -> None:
        row_kernels.outline_row_kernels(module_op)


@dataclasses.dataclass(frozen=True)
class BuildAmxBodies(ModulePass):
    name = "ftuner-build-amx-bodies"
    summary = "AMX dispatch placeholders given their tile code (row strips, VNNI packs, epilogues)"

    def apply(self, module_op) -> None:
        amx_bodies.build_amx_bodies(module_op, bf16_matmul)


@dataclasses.dataclass(frozen=True)
class KeepDispatchCalls(ModulePass):
    name = "ftuner-keep-dispatch-calls"
    summary = "Dispatch calls kept out of line (not inlined) with unit-stride operands"

    def apply(self, module_op) -> None:
        dispatch_calls.keep_dispatch_calls(module_op)


@dataclasses.dataclass(frozen=True)
class ReadReshapesInPlace(ModulePass):
    name = "ftuner-read-reshapes-in-place"
    summary = "Reshape copies of contiguous buffers replaced by views"

    def apply(self, module_op) -> None:
        reshape_copies.read_reshapes_in_place(module_op)


@dataclasses.dataclass(frozen=True)
class ProfileOps(ModulePass):
    name = "ftuner-profile-ops"
    summary = "Clock reads around the public functions' top-level ops, by kind (compile(profile=True))"

    def apply(self, module_op) -> None:
        profile.instrument(module_op)


@dataclasses.dataclass(frozen=True)
class LowerDynamicExpandShapes(ModulePass):
    name = "ftuner-lower-dynamic-expand-shapes"
    summary = "memref.expand_shape with several dynamic sizes in a group as a reinterpret_cast (MLIR 22 asserts on it)"

    def apply(self, module_op) -> None:
        expand_shapes.lower_dynamic_expand_shapes(module_op)


@dataclasses.dataclass(frozen=True)
class BalanceDispatchLoops(ModulePass):
    name = "ftuner-balance-dispatch-loops"
    summary = "The dispatches' OpenMP loops hand out their blocks dynamically (a busy core does not hold the rest up)"

    def apply(self, module_op) -> None:
        pipelines.balance_dispatch_loops(module_op)


PASSES = [SplitEmptyTensors, DropSelfCopies, OutlineRowKernels, BuildAmxBodies, KeepDispatchCalls, ReadReshapesInPlace, ProfileOps, LowerDynamicExpandShapes,
          BalanceDispatchLoops]
