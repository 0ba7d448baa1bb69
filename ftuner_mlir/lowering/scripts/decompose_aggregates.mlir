// Ops that are a composition of others (linalg.softmax: max, sub, exp, sum, div) become those ops.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["linalg.softmax"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %ops : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      %parts = transform.structured.decompose_interface %op : (!transform.any_op) -> !transform.any_op
    }
    transform.yield
  }
}
