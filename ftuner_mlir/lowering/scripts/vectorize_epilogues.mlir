// Each block's epilogue as vector code: rows one at a time, `lanes` columns a step (the target's
// vector width in f32, set by the pass), the last step masked. Left to LLVM, the loops over a block's
// dynamically strided view stayed scalar: the FFN's bias + GELU took 13 ms more inside the dispatch
// than as an op of its own (BERT-base layer, T = 62).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %eps = transform.structured.match ops{["linalg.generic"]} attributes{ftuner.epilogue_op} in %root
        : (!transform.any_op) -> !transform.any_op
    transform.foreach %eps : !transform.any_op {
    ^bb0(%ep: !transform.any_op):
      %tiled, %cols = transform.structured.tile_using_for %ep tile_sizes [16] {ftuner.script_param = "lanes"}
          : (!transform.any_op) -> (!transform.any_op, !transform.op<"scf.for">)
      %main, %rest = transform.loop.peel %cols : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
      %full = transform.structured.match ops{["linalg.generic"]} in %main : (!transform.any_op) -> !transform.any_op
      %fn = transform.get_parent_op %main {op_name = "func.func"} : (!transform.any_op) -> !transform.any_op
      transform.apply_patterns to %fn { transform.apply_patterns.canonicalization } : !transform.any_op
      transform.structured.vectorize %full : !transform.any_op
      %tail = transform.structured.match ops{["linalg.generic"]} in %rest : (!transform.any_op) -> !transform.any_op
      transform.structured.vectorize %tail vector_sizes [16] {ftuner.script_param = "lanes"} : !transform.any_op
    }
    transform.yield
  }
}
