"""Aggregate ops (linalg.softmax) decomposed into the ops they are made of."""
from __future__ import annotations

import json

from ...ir.walk import walk
from ..transform import apply_script, transform_script

# Ops that are a composition of others (linalg.softmax: max, sub, exp, sum, div) become those ops.
AGGREGATED_OPS = ("linalg.softmax",)
DECOMPOSE_AGGREGATES = transform_script(f"""\
    %ops = transform.structured.match ops{{{json.dumps(list(AGGREGATED_OPS))}}} in %root
        : (!transform.any_op) -> !transform.any_op
    transform.foreach %ops : !transform.any_op {{
    ^bb0(%op: !transform.any_op):
      %parts = transform.structured.decompose_interface %op : (!transform.any_op) -> !transform.any_op
    }}
""")


def decompose_aggregates(module_op) -> None:
    if any(op.operation.name in AGGREGATED_OPS for op in walk(module_op)):
        apply_script(DECOMPOSE_AGGREGATES, module_op)
