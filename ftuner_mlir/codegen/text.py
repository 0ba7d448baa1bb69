"""A tiny writer for MLIR text: lines with fresh SSA names, indented by region nesting."""
from __future__ import annotations


class IRBody:
    """Collects lines and hands out fresh SSA names."""

    def __init__(self):
        self.lines: list[str] = []
        self.count = 0

    def fresh(self, hint: str) -> str:
        self.count += 1
        return f"%{hint}{self.count}"

    def __call__(self, line: str):
        self.lines.append(line)

    def op(self, hint: str, rhs: str) -> str:
        name = self.fresh(hint)
        self.lines.append(f"{name} = {rhs}")
        return name

    def if_else(self, hint: str, cond: str, result_type: str, then, otherwise) -> str:
        """`scf.if cond -> (result_type)`: `then()` and `otherwise()` emit their branch's ops and return
        the value it yields; the if's result name is returned."""
        result = self.fresh(hint)
        self(f"{result} = scf.if {cond} -> ({result_type}) {{")
        self(f"scf.yield {then()} : {result_type}")
        self("} else {")
        self(f"scf.yield {otherwise()} : {result_type}")
        self("}")
        return result

    def const(self, value: int) -> str:
        return self.op("c", f"arith.constant {value} : index")

    def text(self, indent="  ") -> str:
        out, depth = [], 1
        for line in self.lines:
            if line.startswith("}"):
                depth -= 1
            out.append(indent * depth + line)
            if line.endswith("{"):
                depth += 1
        return "\n".join(out)
