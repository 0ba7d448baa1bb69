"""A Family: the loops of an op, which operand dims each loop indexes, and the problem dims a uKernel
set is sized by."""
from __future__ import annotations

import dataclasses

OperandMap = tuple[str, ...]      # the loop name indexing each dim of one operand, outermost first


@dataclasses.dataclass(frozen=True)
class Family:
    name: str
    op: str                                # the linalg op this family is matched from
    loops: tuple[str, ...]                 # loop names in the op's iteration order
    reductions: tuple[str, ...]            # the loops that are reduced (the rest are parallel)
    operands: tuple[OperandMap, ...]       # inputs then the output

    def __post_init__(self):
        for names in self.operands:
            unknown = set(names) - set(self.loops)
            if unknown:
                raise ValueError(f"family {self.name}: operand map names unknown loops {sorted(unknown)}")
        if not set(self.reductions) <= set(self.loops):
            raise ValueError(f"family {self.name}: reductions {self.reductions} are not loops {self.loops}")

    def affine_maps(self) -> tuple[str, ...]:
        """The operands' indexing maps as MLIR prints them, e.g. `(d0, d1, d2) -> (d0, d2)`."""
        dims = {name: f"d{i}" for i, name in enumerate(self.loops)}
        head = f"({', '.join(dims[n] for n in self.loops)})"
        return tuple(f"{head} -> ({', '.join(dims[n] for n in names)})" for names in self.operands)

    def loop_index(self, name: str) -> int:
        return self.loops.index(name)
