"""Phase 3 of ftuner-lower-cpu, on tensors: reshapes, pads, transposes, row ops and copies as loops;
the uKernels as vector code."""
from __future__ import annotations

import dataclasses

from ...lowering.graph import abi
from ...lowering.loops import copies, pads, parallel_generics, reshapes, row_chains, transposes, ukernel_vectors
from ..base import MAX_THREADS, ModulePass, option


@dataclasses.dataclass(frozen=True)
class ReshapesAsViews(ModulePass):
    name = "ftuner-reshapes-as-views"
    summary = "Reshapes that split or merge dims read their source in place (no copy)"

    def apply(self, module_op) -> None:
        reshapes.reshapes_as_views(module_op)


@dataclasses.dataclass(frozen=True)
class DecomposePads(ModulePass):
    name = "ftuner-decompose-pads"
    summary = "tensor.pad as a fill and a copy into the padded tensor"

    def apply(self, module_op) -> None:
        pads.decompose_pads(module_op)


@dataclasses.dataclass(frozen=True)
class ParallelizeCopies(ModulePass):
    name = "ftuner-parallelize-copies"
    summary = "Copies the emitters mark parallel (conv2d's im2col) tiled over the cores"

    def apply(self, module_op) -> None:
        copies.parallelize_copies(module_op)


@dataclasses.dataclass(frozen=True)
class GeneralizeTransposes(ModulePass):
    name = "ftuner-generalize-transposes"
    summary = "linalg.transpose as a generic (fuses and vectorizes like the other elementwise ops)"

    def apply(self, module_op) -> None:
        transposes.generalize_transposes(module_op)


@dataclasses.dataclass(frozen=True)
class FuseRowChains(ModulePass):
    name = "ftuner-fuse-row-chains"
    summary = "Chains of row ops with reductions (softmax, layer norm) as one loop over rows, vectorized"

    def apply(self, module_op) -> None:
        row_chains.fuse_row_chains(module_op, self.resolved_target().vector_bits)


@dataclasses.dataclass(frozen=True)
class ParallelizeGenerics(ModulePass):
    name = "ftuner-parallelize-generics"
    summary = "Big elementwise ops and row reductions of the public functions over the cores (scf.forall)"
    num_threads: int = option(0, "as ftuner-lower-cpu (1: nothing to do)", minimum=0, maximum=MAX_THREADS)

    def apply(self, module_op) -> None:
        if (self.num_threads or self.resolved_target().cores) > 1:
            parallel_generics.parallelize_generics(module_op, self.resolved_target().vector_bits)


@dataclasses.dataclass(frozen=True)
class VectorizeUKernels(ModulePass):
    name = "ftuner-vectorize-ukernels"
    summary = ("Vectorize the static uKernel functions: reduction step 1, rows x cols vector.contract, "
               "accumulators hoisted out of the reduction loop")

    def apply(self, module_op) -> None:
        ukernel_vectors.vectorize_ukernels(module_op)


@dataclasses.dataclass(frozen=True)
class ComputeBranchesInOutputs(ModulePass):
    name = "ftuner-compute-branches-in-outputs"
    summary = ("A function result chosen by an scf.if whose branches write one tensor.empty is computed in "
               "its out buffer (no allocation and copy)")

    def apply(self, module_op) -> None:
        abi.compute_branches_in_outputs(module_op)


PASSES = [ReshapesAsViews, DecomposePads, ParallelizeCopies, GeneralizeTransposes, FuseRowChains, ParallelizeGenerics, ComputeBranchesInOutputs,
          VectorizeUKernels]
