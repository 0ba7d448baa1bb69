"""Op families: what an op computes, in plain Python (no MLIR). The uKernel spaces, the IR matcher, the
emitters and the reports all read a family from here; a new family is a new module plus registration."""
from .conv2d import CONV2D_FAMILIES, Conv2dFamily
from .family import Family, OperandMap
from .matmul import MATMUL_FAMILIES, MatmulFamily

# Families the uKernel sets are selected for (the matmul family); conv2d is served through them.
FAMILIES: dict[str, Family] = {f.name: f for f in MATMUL_FAMILIES}
CONV_FAMILIES: dict[str, Conv2dFamily] = {f.op: f for f in CONV2D_FAMILIES}


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


__all__ = ["CONV_FAMILIES", "Conv2dFamily", "FAMILIES", "Family", "MatmulFamily", "OfFamily", "OperandMap", "family"]
