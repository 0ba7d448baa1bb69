// Each uKernel: vectorize its zero fill if it has one (the first reduction block's uKernels start from
// zero instead of reading C), tile the reduction by 1, vectorize the static rows x cols x 1 contraction,
// and hoist the accumulator read/write out of the reduction loop so it stays in vector registers; its
// transposes (the packs' 16x16 blocks) vectorized. Then the reduction loop of the full-width uKernels
// (ftuner.unroll_k: the ones most of a matmul runs in) unrolled by 4: its counter, branch and B-offset
// arithmetic take one slot in four iterations' worth of FMAs instead of competing with them for the FMA
// ports every iteration (single-threaded 8x32, measured side by side: +5..12%; the remainder strips stay
// rolled, for compile time).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
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
      transform.loop.unroll %kloop { factor = 4 } : !transform.any_op
    }
    transform.yield
  }
}
