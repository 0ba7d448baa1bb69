"""The child process that turns a saved torch.export program into linalg-on-tensors MLIR text with
torch-mlir (`python -m ftuner_mlir.torch.import_worker PROGRAM.pt2 OUT.mlir`).

A child, because torch-mlir carries its own copy of MLIR and LLVM: loaded beside the project's MLIR
bindings, the two clash (the JIT computed garbage). Exit code 0: OUT.mlir written; 3: the program holds
an op torch-mlir cannot lower to upstream MLIR, named on the last line of stderr.
"""
from __future__ import annotations

import re
import sys

UNSUPPORTED_EXIT = 3
FOREIGN_DIALECTS = ("torch", "tm_tensor", "torch_c")     # what upstream MLIR cannot parse or lower
_FOREIGN_OP = re.compile(r"\b((?:torch|tm_tensor|torch_c)\.[A-Za-z0-9_.]+)")
# what a left-over op came from in the model, and how to do without it
EXPLAINED = {
    "tm_tensor.scan": "torch.cumsum (a prefix sum: RoBERTa-family position ids, or a decoder called without an "
                      "attention mask, compute one); pass position_ids / attention_mask to the model to avoid it",
}


def foreign_ops(module) -> dict[str, str]:
    """Ops of torch-mlir's own dialects left in the module: name -> where the first one came from (the
    model's file:line). Ops, not text: an assert's message naming `torch.aten.mm` is no op."""
    from torch_mlir.ir import WalkResult

    found: dict[str, str] = {}

    def foreign(op) -> bool:
        return op is not None and op.name.split(".", 1)[0] in FOREIGN_DIALECTS

    def visit(op):
        if foreign(op) and not foreign(op.parent) and op.name not in found:     # not a scan's own yield
            found[op.name] = _where(op.location)
        return WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


_FILE_LINE = re.compile(r'"([^"]+)":(\d+)')


def _where(location) -> str:
    """The innermost file:line of a location (torch-mlir nests the model's line in call sites)."""
    found = _FILE_LINE.search(str(location))
    return f"{found.group(1)}:{found.group(2)}" if found else "an unknown line of the model"


def describe(ops: dict[str, str]) -> str:
    return "; ".join(f"{name} at {where}" + (f" ({EXPLAINED[name]})" if name in EXPLAINED else "")
                     for name, where in sorted(ops.items()))


def main(argv: list[str]) -> int:
    program, out = argv
    import torch
    from torch_mlir import fx

    from torch_mlir.extras.fx_decomp_util import get_decomposition_table
    from .decompositions import LEGAL_OPS, for_import

    ep = torch.export.load(program)
    try:
        ep = for_import(ep, get_decomposition_table())
        module = fx.export_and_import(ep, output_type="linalg-on-tensors", func_name="main",
                                      decomposition_table={}, backend_legal_ops=LEGAL_OPS)
    except Exception as err:          # torch-mlir reports an op it cannot lower as a generic error
        import traceback
        traceback.print_exc()
        message = [line.strip() for line in str(err).strip().splitlines() if line.strip()]
        op = next((m for line in message for m in _FOREIGN_OP.findall(line)), None)
        print(f"unsupported: torch-mlir cannot import the model ({op or type(err).__name__}): "
              f"{' '.join(message[:2])[:400]}", file=sys.stderr)
        return UNSUPPORTED_EXIT
    left = foreign_ops(module)
    if left:
        print(f"unsupported: the model needs {describe(left)}: ops of torch-mlir's own dialects that it left "
              f"in the linalg output, which upstream MLIR cannot compile", file=sys.stderr)
        return UNSUPPORTED_EXIT
    text = str(module)
    with open(out, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
