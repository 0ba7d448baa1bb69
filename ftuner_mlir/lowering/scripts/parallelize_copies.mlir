// Copies the emitters mark (conv2d's im2col) run over the cores: one task per index of their outermost
// dims (the attribute's value says how many: 1 or 2).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %outer1 = transform.structured.match ops{["linalg.generic"]} attributes{ftuner.parallel_outer = 1 : i64} in %root
        : (!transform.any_op) -> !transform.any_op
    transform.foreach %outer1 : !transform.any_op {
    ^bb0(%copy: !transform.any_op):
      %tiled, %loop = transform.structured.tile_using_forall %copy tile_sizes [1]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    }
    %outer2 = transform.structured.match ops{["linalg.generic"]} attributes{ftuner.parallel_outer = 2 : i64} in %root
        : (!transform.any_op) -> !transform.any_op
    transform.foreach %outer2 : !transform.any_op {
    ^bb0(%copy: !transform.any_op):
      %tiled, %loop = transform.structured.tile_using_forall %copy tile_sizes [1, 1]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    }
    transform.yield
  }
}
