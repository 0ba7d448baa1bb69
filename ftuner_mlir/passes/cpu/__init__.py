"""The passes of ftuner-lower-cpu, one module per phase (lowering/<phase>/ holds what they run);
passes/lower_cpu.py lists them in order."""
from . import buffers, dispatch, graph, llvm, loops
from .buffers import BalanceDispatchLoops, BuildAmxBodies, DropSelfCopies, KeepDispatchCalls, LowerDynamicExpandShapes, ProfileOps, ReadReshapesInPlace
from .dispatch import ApproximateMath, FuseEpilogues, ReadHeadsInPlace, RecomputeCheapProducers
from .graph import ClampExtractIndices, DecomposeAggregates, DestinationAbi, DropUnusedResults, FoldConstantGenerics, SkipIdentityBroadcasts
from .llvm import (AnnotateLlvmTarget, Bf16MemoryAsI16, CheckLlvmDialect, KeepOutOfLine, MergeIdenticalFunctions, OutlineLoopNests, RecordAbiTable,
                   ReportFailedAsserts, StoreI1AsI8, StridedCopiesAsLoops)
from .loops import DecomposePads, FuseRowChains, GeneralizeTransposes, ParallelizeCopies, ComputeBranchesInOutputs, ParallelizeGenerics, ReshapesAsViews, VectorizeUKernels

PASSES = [cls for module in (graph, dispatch, loops, buffers, llvm) for cls in module.PASSES]
