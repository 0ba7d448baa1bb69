"""ftuner-select-ukernels: attach the uKernel set chosen by the hardware model to each supported op."""
from __future__ import annotations

import dataclasses

from mlir import ir

from ..ukernel.space import UKernelSet, select
from .base import ModulePass, walk
from .matmul_family import classify

ATTR = "ftuner.ukernels"
_INT_FIELDS = ("mr", "nr", "kc", "mc", "nc", "cores")


def ukernel_set_to_attr(uks: UKernelSet) -> ir.Attribute:
    i64 = ir.IntegerType.get_signless(64)
    entries = {f: ir.IntegerAttr.get(i64, getattr(uks, f)) for f in _INT_FIELDS}
    entries["family"] = ir.StringAttr.get(uks.family)
    entries["dtype"] = ir.StringAttr.get(uks.dtype)
    return ir.DictAttr.get(entries)


def ukernel_set_from_attr(attr: ir.Attribute) -> UKernelSet:
    """Raises ValueError naming what is missing or wrong."""
    if not isinstance(attr, ir.DictAttr):
        raise ValueError(f"{ATTR} must be a dictionary attribute")
    d = ir.DictAttr(attr)
    values = {}
    for f in dataclasses.fields(UKernelSet):
        if f.name not in d:
            raise ValueError(f"{ATTR} lacks field '{f.name}'")
        raw = d[f.name]
        if f.name in _INT_FIELDS:
            if not isinstance(raw, ir.IntegerAttr):
                raise ValueError(f"{ATTR} field '{f.name}' must be an integer")
            values[f.name] = ir.IntegerAttr(raw).value
        else:
            if not isinstance(raw, ir.StringAttr):
                raise ValueError(f"{ATTR} field '{f.name}' must be a string")
            values[f.name] = ir.StringAttr(raw).value
    return UKernelSet(**values)


@dataclasses.dataclass(frozen=True)
class SelectUKernels(ModulePass):
    name = "ftuner-select-ukernels"
    summary = "Attach the uKernel set chosen by the hardware model (attribute ftuner.ukernels) to each matmul-family op"

    def run(self, module_op) -> None:
        target = self.resolved_target()
        cache: dict[tuple[str, str], UKernelSet] = {}
        for op in list(walk(module_op)):
            kind = classify(op)
            if kind is None or ATTR in op.attributes:
                continue
            if kind not in cache:
                cache[kind] = select(target, *kind)
            op.attributes[ATTR] = ukernel_set_to_attr(cache[kind])
