"""ftuner-lower-cpu: calling convention, uKernel vectorization, bufferization, OpenMP, LLVM dialect."""
from __future__ import annotations

import dataclasses

from ..codegen import amx_matmul, matmul
from ..hardware.cpu import ISA_TRANSPOSE_LOWERING
from ..lowering import (abi, amx_bodies, asserts, bf16_memory, broadcasts, cheap_producers, constant_generics, cpu, dead_results, dispatch_calls, epilogues, expand_shapes, head_views, llvm_target, math_approx,
                        merge_functions, narrow_types, outline, pads, profile, reshape_copies, reshapes, row_chains, safe_indexing, strided_copies, transposes)
from .base import MAX_THREADS, ModulePass, option
from .vectorize_ukernels import VectorizeUKernels


@dataclasses.dataclass(frozen=True)
class LowerCpu(ModulePass):
    name = "ftuner-lower-cpu"
    summary = "Destination-passing ABI, vectorize uKernels, bufferize, parallelize over the cores (OpenMP), lower to the LLVM dialect"
    num_threads: int = option(0, "threads for the parallel loops (0 = the target's cores; 1 = sequential)",
                              minimum=0, maximum=MAX_THREADS)
    profile: bool = option(False, "time each top-level op of the public functions by kind (compile(profile=True))")

    def threads(self) -> int:
        return self.num_threads or self.resolved_target().cores

    def steps(self) -> list:
        """On tensors: generics of constants alone folded into constants, the ABI, dynamic broadcasts skipped when they are copies, attention's head transposes read in place by the batch matmuls, data-dependent reads clamped, softmax as its parts, results nothing reads (softmax's argmax) dropped, cheap producers recomputed per consumer and elementwise ops fused, f32 exp/erf/tanh as polynomials, elementwise consumers of matmuls fused into their dispatch as epilogues, reshapes that split or merge dims as views, pads as copies, parallel copies, transposes as generics, chains of row ops (softmax, layer norm) as one loop over rows, big generics over the cores, vectorized uKernels; bufferize (a result computed in its out buffer not copied onto itself); AMX dispatches given their bodies; reshapes of contiguous buffers read in place; in profile mode,
        clock reads around the public functions' ops; then inlining, OpenMP (dispatch blocks handed out dynamically), strided copies as linalg copies, loops, top-level loop nests outlined (returning what they yield; identical ones merged, as the epilogue copies are), i1 buffers as i8, failed asserts reported, the ABI table recorded, and the LLVM dialect (bf16 loads and stores as i16 ones), checked, with the target for
        LLVM on every function."""
        threads = self.threads()
        transpose_lowering = ISA_TRANSPOSE_LOWERING[self.resolved_target().isa]
        after = cpu.after_bufferize_pipeline() + cpu.parallel_pipeline(threads)
        to_llvm = cpu.llvm_pipeline(openmp=threads > 1, transpose_lowering=transpose_lowering,
                                    amx=self.resolved_target().bf16_engine == "amx")
        return [constant_generics.fold_constant_generics, abi.convert_public_functions, broadcasts.skip_identity_broadcasts, self.read_heads_in_place, safe_indexing.clamp_extract_indices,
                cpu.decompose_aggregates, dead_results.drop_unused_results, cheap_producers.recompute_cheap_producers, "linalg-fuse-elementwise-ops",
                math_approx.approximate_math, self.fuse_epilogues, epilogues.LOWER_MASKS, reshapes.reshapes_as_views, pads.decompose_pads, cpu.parallelize_copies,
                transposes.generalize_transposes, self._fuse_row_chains, self._parallelize_generics,
                VectorizeUKernels(target=self.target).apply,
                ",".join(cpu.bufferize_pipeline()), abi.drop_self_copies, self.build_amx_bodies, dispatch_calls.keep_dispatch_calls,
                reshape_copies.read_reshapes_in_place, self._profile,
                expand_shapes.lower_dynamic_expand_shapes, ",".join(after), cpu.balance_dispatch_loops,
                strided_copies.copies_as_loops, ",".join(cpu.loops_pipeline()),
                outline.outline_top_level_loops, merge_functions.merge_identical_functions, narrow_types.store_i1_as_i8, asserts.report_failed_asserts, abi.record_abi_table,
                ",".join(to_llvm), bf16_memory.bf16_memory_as_i16, outline.keep_out_of_line, cpu.check_llvm_dialect, self._annotate_llvm_target]

    def _profile(self, module_op) -> None:
        if self.profile:
            profile.instrument(module_op)

    def fuse_epilogues(self, module_op) -> None:
        epilogues.fuse_epilogues(module_op, self.resolved_target().lanes(32))

    def build_amx_bodies(self, module_op) -> None:
        amx_bodies.build_amx_bodies(module_op, amx_matmul)

    def read_heads_in_place(self, module_op) -> None:
        head_views.read_heads_in_place(module_op, lambda uks, zero_init, views: (
            matmul.dispatch_name(uks, zero_init, views=views), matmul.emit_all(uks, zero_init, views=views)))

    def _fuse_row_chains(self, module_op) -> None:
        row_chains.fuse_row_chains(module_op, self.resolved_target().vector_bits)

    def _parallelize_generics(self, module_op) -> None:
        if self.threads() > 1:
            cpu.parallelize_generics(module_op, self.resolved_target().vector_bits)

    def _annotate_llvm_target(self, module_op) -> None:
        llvm_target.annotate(module_op, self.resolved_target())
