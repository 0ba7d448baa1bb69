"""Phase 2 of ftuner-lower-cpu, on tensors: each matmul dispatch grows by what fuses into it."""
from __future__ import annotations

import dataclasses

from ...codegen import bf16_matmul, matmul
from ...ukernel.bf16_space import Bf16Set
from ...lowering.dispatch import cheap_producers, epilogues, fused_producers, head_views, math_approx
from ..base import ModulePass


@dataclasses.dataclass(frozen=True)
class ReadHeadsInPlace(ModulePass):
    name = "ftuner-read-heads-in-place"
    summary = "Attention's head transposes read in place by the batch matmuls (their dispatches take strided views)"

    def apply(self, module_op) -> None:
        head_views.read_heads_in_place(module_op, _dispatch_on_views)


def _dispatch_on_views(uks, zero_init: bool, views, heads: int | None) -> tuple[str, dict]:
    """The batch dispatch on head views and the builders of its functions: the vector dispatch, or the
    AMX placeholder for `heads` heads (its body and helpers come after bufferization,
    ftuner-build-amx-bodies)."""
    if isinstance(uks, Bf16Set):
        name = bf16_matmul.dispatch_name(uks, zero_init, views=views, heads=heads)
        return name, {name: lambda: bf16_matmul.emit_placeholder(uks, zero_init, views=views, heads=heads)}
    return matmul.dispatch_name(uks, zero_init, views=views), matmul.emit_all(uks, zero_init, views=views)


@dataclasses.dataclass(frozen=True)
class RecomputeCheapProducers(ModulePass):
    name = "ftuner-recompute-cheap-producers"
    summary = "Cheap elementwise producers read by several consumers cloned into each, so each fuses"

    def apply(self, module_op) -> None:
        cheap_producers.recompute_cheap_producers(module_op)


@dataclasses.dataclass(frozen=True)
class DropFusedProducers(ModulePass):
    name = "ftuner-drop-fused-producers"
    summary = "Generics fusion left unread, kept alive only by the asserts their fused copies also check (embedding gathers)"

    def apply(self, module_op) -> None:
        fused_producers.drop_fused_producers(module_op)


@dataclasses.dataclass(frozen=True)
class ApproximateMath(ModulePass):
    name = "ftuner-approximate-math"
    summary = ("f32 exp, erf and tanh as vectorizable polynomials (libm calls stay scalar); powers and f32 "
               "divisions by constants as multiplications")

    def apply(self, module_op) -> None:
        math_approx.approximate_math(module_op)


@dataclasses.dataclass(frozen=True)
class FuseEpilogues(ModulePass):
    name = "ftuner-fuse-epilogues"
    summary = "Elementwise consumers of a matmul (bias, GELU, residual, a rounding to bf16) run inside its dispatch"

    def apply(self, module_op) -> None:
        epilogues.fuse_epilogues(module_op, self.resolved_target().lanes(32))


PASSES = [ReadHeadsInPlace, RecomputeCheapProducers, DropFusedProducers, ApproximateMath, FuseEpilogues]
