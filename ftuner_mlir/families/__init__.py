"""Op families: what an op computes, in plain Python (no MLIR). The uKernel spaces, the IR matcher, the
emitters and the reports all read a family from here; a new family is a new module plus registration."""
from .family import Family, OperandMap
from .matmul import MATMUL_FAMILIES

FAMILIES: dict[str, Family] = {f.name: f for f in MATMUL_FAMILIES}


def family(name: str) -> Family:
    """The registered family `name`; a ValueError lists the known ones."""
    try:
        return FAMILIES[name]
    except KeyError:
        raise ValueError(f"unknown op family {name!r}; expected one of {sorted(FAMILIES)}") from None


class OfFamily:
    """For a value with a `family` name field (a uKernel set): the family and its traits."""

    @property
    def op_family(self) -> Family:
        return family(self.family)

    @property
    def batched(self) -> bool:
        return self.op_family.batched

    @property
    def transpose_b(self) -> bool:
        return self.op_family.transpose_b


__all__ = ["FAMILIES", "Family", "OfFamily", "OperandMap", "family"]
