// The transposes ftuner-generalize-transposes marked become linalg.generics.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match attributes{ftuner.generalize} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %ops : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      %generic = transform.structured.generalize %op : (!transform.any_op) -> !transform.any_op
    }
    transform.yield
  }
}
