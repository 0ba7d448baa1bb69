"""ftuner-lower-cpu: from tiled tensors to the LLVM dialect, as five phases of passes.

Each entry is a registered pass (`ftuner-opt --<flag>` runs it alone; passes/cpu/<phase>.py) or
upstream MLIR passes, with why they run there. docs/pipeline.md is generated from these lists
(`ftuner-opt --list-phases`).
"""
from __future__ import annotations

import dataclasses

from ..hardware.cpu import ISA_TRANSPOSE_LOWERING
from ..lowering.buffers import pipelines as buffer_pipelines
from ..lowering.dispatch.epilogues import LOWER_MASKS
from ..lowering.llvm import pipelines as llvm_pipelines
from .base import MAX_THREADS, ModulePass, Phase, Upstream, option
from .cpu import buffers, dispatch, graph, llvm, loops


@dataclasses.dataclass(frozen=True)
class LowerCpu(ModulePass):
    name = "ftuner-lower-cpu"
    summary = "Destination-passing ABI, vectorize uKernels, bufferize, parallelize over the cores (OpenMP), lower to the LLVM dialect"
    num_threads: int = option(0, "threads for the parallel loops (0 = the target's cores; 1 = sequential)",
                              minimum=0, maximum=MAX_THREADS)
    profile: bool = option(False, "time each top-level op of the public functions by kind (compile(profile=True))")

    def threads(self) -> int:
        return self.num_threads or self.resolved_target().cores

    def phases(self) -> list[Phase]:
        t, threads = self.resolved_target(), self.threads()
        return [
            Phase("graph", "on tensors: constants, the calling convention, graph clean-ups", [
                graph.FoldConstantGenerics(target=t),        # first: what it folds is gone before the ABI copies it
                graph.DestinationAbi(target=t),
                graph.SkipIdentityBroadcasts(target=t),
                graph.ClampExtractIndices(target=t),
                graph.DecomposeAggregates(target=t),
                graph.DropUnusedResults(target=t),            # after softmax's parts exist: its argmax
            ]),
            Phase("dispatch", "on tensors: what fuses into each matmul dispatch", [
                dispatch.ReadHeadsInPlace(target=t),
                dispatch.RecomputeCheapProducers(target=t),   # before fusion: a producer with one use fuses
                Upstream("linalg-fuse-elementwise-ops", "elementwise producers fused into their consumers"),
                dispatch.DropFusedProducers(target=t),       # what fusion copied but could not erase (asserts)
                dispatch.ApproximateMath(target=t),          # after fusion: one polynomial per fused body
                dispatch.FuseEpilogues(target=t),
                Upstream(LOWER_MASKS, "the epilogues' vector.mask regions as masked transfers, before a fold breaks them"),
            ]),
            Phase("loops", "on tensors: row ops, copies and reshapes as loops; uKernels as vector code", [
                loops.ReshapesAsViews(target=t),
                loops.DecomposePads(target=t),
                loops.ParallelizeCopies(target=t),
                loops.GeneralizeTransposes(target=t),
                loops.FuseRowChains(target=t),
                loops.ParallelizeGenerics(target=t, num_threads=threads),   # what row chains left, over the cores
                loops.ComputeBranchesInOutputs(target=t),     # a result the parallel branch chose, in its out buffer
                loops.VectorizeUKernels(target=t),
            ]),
            Phase("buffers", "bufferization, what needs buffers, OpenMP", [
                Upstream(",".join(buffer_pipelines.cleanup_pipeline()), "clean-ups"),
                buffers.SplitEmptyTensors(target=t),         # after CSE merged them, before the analysis
                Upstream("eliminate-empty-tensors", "empty tensors that are slices of a destination become them"),
                Upstream(",".join(buffer_pipelines.bufferize_pipeline()),
                         "one-shot bufferization; private functions keep strided layouts (subviews without copies)"),
                buffers.DropSelfCopies(target=t),
                buffers.OutlineRowKernels(target=t),          # on buffers: bufferization saw each kernel in place
                buffers.BuildAmxBodies(target=t),             # on buffers: the tile code indexes memrefs
                buffers.KeepDispatchCalls(target=t),
                buffers.ReadReshapesInPlace(target=t),
                *([buffers.ProfileOps(target=t)] if self.profile else []),
                buffers.LowerDynamicExpandShapes(target=t),
                Upstream(",".join(buffer_pipelines.after_bufferize_pipeline()),
                         "row strips and uKernels inlined into their dispatch, then buffers freed, each after its last use"),
                Upstream(",".join(buffer_pipelines.parallel_pipeline(threads)),
                         "scf.forall as OpenMP parallel loops (sequential loops for one thread)"),
                buffers.BalanceDispatchLoops(target=t),
            ]),
            Phase("llvm", "loops, outlined loop nests, asserts, the ABI table, the LLVM dialect", [
                llvm.StridedCopiesAsLoops(target=t),
                Upstream(",".join(llvm_pipelines.loops_pipeline()),
                         "vector transfers and linalg ops as loops; strided metadata made explicit"),
                llvm.OutlineLoopNests(target=t),
                llvm.MergeIdenticalFunctions(target=t),       # the same epilogue copy or loop nest, once
                llvm.StoreI1AsI8(target=t),
                llvm.ReportFailedAsserts(target=t),
                llvm.RecordAbiTable(target=t),
                Upstream(",".join(llvm_pipelines.llvm_pipeline(
                    openmp=threads > 1, transpose_lowering=ISA_TRANSPOSE_LOWERING[t.isa], amx=t.bf16_engine == "amx",
                    x86vector=t.bf16_engine == "avx512_bf16")),
                    "everything to the LLVM dialect (the amx or x86vector dialect's conversion for the bf16 engine)"),
                llvm.Bf16MemoryAsI16(target=t),
                llvm.KeepOutOfLine(target=t),
                llvm.CheckLlvmDialect(target=t),
                llvm.AnnotateLlvmTarget(target=t),
            ]),
        ]

    def passes(self) -> list:
        return [p for phase in self.phases() for p in phase.passes]
