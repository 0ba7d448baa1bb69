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
# dialects the export may leave behind that upstream MLIR cannot parse or lower
_FOREIGN_OP = re.compile(r"\b((?:torch|tm_tensor|torch_c)\.[A-Za-z0-9_.]+)")


def foreign_ops(text: str) -> list[str]:
    """Ops of torch-mlir's own dialects in the text (before the resource blobs)."""
    return sorted(set(_FOREIGN_OP.findall(text.split("{-#", 1)[0])))


def main(argv: list[str]) -> int:
    program, out = argv
    import torch
    from torch_mlir import fx

    ep = torch.export.load(program)
    try:
        module = fx.export_and_import(ep, output_type="linalg-on-tensors", func_name="main")
    except Exception as err:          # torch-mlir reports an op it cannot lower as a generic error
        import traceback
        traceback.print_exc()
        message = [line.strip() for line in str(err).strip().splitlines() if line.strip()]
        op = next((m for line in message for m in _FOREIGN_OP.findall(line)), None)
        print(f"unsupported: torch-mlir cannot import the model ({op or type(err).__name__}): "
              f"{' '.join(message[:2])[:400]}", file=sys.stderr)
        return UNSUPPORTED_EXIT
    text = str(module)
    left = foreign_ops(text)
    if left:
        print(f"unsupported: the model needs {', '.join(left)}: ops of torch-mlir's own dialects that it "
              f"left in the linalg output, which upstream MLIR cannot compile", file=sys.stderr)
        return UNSUPPORTED_EXIT
    with open(out, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
