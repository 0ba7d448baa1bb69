"""The child process that turns a saved torch.export program into linalg-on-tensors MLIR text with
torch-mlir (`python -m ftuner_mlir.torch.import_worker PROGRAM.pt2 OUT.mlir WEIGHTS.bin`, or started
as a spare with `--spare` and those three arguments sent on stdin: ../backends/child_process.py).

A child, because torch-mlir carries its own copy of MLIR and LLVM: loaded beside the project's MLIR
bindings, the two clash (the JIT computed garbage). Exit code 0: OUT.mlir written; 3: the program holds
an op torch-mlir cannot lower to upstream MLIR, named on the last line of stderr.

The weights never become text: the parent wrote the program's tensors to WEIGHTS.bin (the saved
program holds stand-ins: program_tensors.py), this child maps the file and puts them back; each tensor
literal is a `dense_resource<ftuner_weight_N>` over the tensor's own memory (torch-mlir would copy it
through a Python list), a view of the map for the program's own tensors, appended to the file for any
other; the text names that file and each blob's offset in the module attribute
`ftuner.external_weights` (ir/weights.py attaches them when the compiler parses the text).
"""
from __future__ import annotations

import re
import sys

from ..backends.child_process import spare_job
from ..ir.attributes import EXTERNAL_WEIGHTS_ATTR
from .program_tensors import ALIGNMENT, Mapped, raw_bytes

UNSUPPORTED_EXIT = 3
FOREIGN_DIALECTS = ("torch", "tm_tensor", "torch_c")     # what upstream MLIR cannot parse or lower
_RESOURCE = re.compile(r"dense_resource<([^>]+)>")
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


def _weight_hooks(mapped):
    """torch-mlir hooks that import each tensor literal of more than one element as a blob over the
    tensor's memory, named ftuner_weight_N (one name per tensor, however often it is used). A literal
    that is a view of the mapped weights file (the program's own tensors) is named at its offset there;
    any other (a constant a decomposition made) is kept to be appended to the file."""
    import torch
    from torch_mlir.extras.fx_importer import FxImporterHooks, create_mlir_tensor_type
    from torch_mlir.ir import DenseResourceElementsAttr, Operation

    class OutOfBand(FxImporterHooks):
        def __init__(self):
            self.offsets: dict[str, int] = {}                   # blob name -> offset in the weights file
            self.unmapped: list[tuple[str, object]] = []        # (blob name, bytes) to append
            self._attrs: dict[int, tuple[torch.Tensor, object]] = {}     # id(tensor) -> (tensor, attribute)

        def resolve_literal(self, gni, literal, info):
            if not isinstance(literal, torch.Tensor) or literal.numel() <= 1:
                return None                        # torch-mlir makes a splat of it
            vtensor = gni._cc.tensor_to_vtensor_type(literal)
            if id(literal) not in self._attrs:
                raw = raw_bytes(literal)
                attr = DenseResourceElementsAttr.get_from_buffer(raw, f"ftuner_weight_{len(self._attrs)}",
                                                                 create_mlir_tensor_type(literal))
                name = _RESOURCE.match(str(attr)).group(1)
                offset = mapped.offset_of(literal)
                if offset is None:
                    self.unmapped.append((name, raw))
                else:
                    self.offsets[name] = offset
                self._attrs[id(literal)] = (literal, attr)
            attr = self._attrs[id(literal)][1]
            return Operation.create("torch.vtensor.literal", results=[vtensor], attributes={"value": attr}).result

    return OutOfBand()


def append_weights(hooks, path: str) -> dict[str, int]:
    """The blobs that are not in the weights file appended to it, aligned; every blob's name -> offset."""
    offsets = dict(hooks.offsets)
    with open(path, "ab") as f:
        for name, raw in hooks.unmapped:
            f.write(b"\0" * (-f.tell() % ALIGNMENT))
            offsets[name] = f.tell()
            f.write(raw)
    return offsets


def _external(module, path: str, offsets: dict[str, int]) -> None:
    """The module names the weights file and each blob's offset in it, and carries no blob itself."""
    from torch_mlir.ir import Attribute, StringAttr

    blobs = ", ".join(f"{name} = {offset} : i64" for name, offset in offsets.items())
    with module.context:
        module.operation.attributes[EXTERNAL_WEIGHTS_ATTR] = Attribute.parse(
            f"{{file = {StringAttr.get(path)}, offsets = {{{blobs}}}}}")


def _without_reproducer_print() -> None:
    """torch-mlir's run_pipeline_with_repro_report (fx.py and compiler_utils.py call it, each by its own
    name) prints the whole module before running the passes, for a reproducer it writes only if they
    fail: with the weights' blobs that is ~870 MB of hex for BERT-base, 1.8 GB of the import's peak
    memory and seconds, twice. The same run without the print; a failure still raises torch-mlir's
    error, and MLIR prints the diagnostics to stderr as before."""
    import io

    from torch_mlir import compiler_utils, fx
    from torch_mlir.passmanager import PassManager

    def run(module, pipeline: str, description: str, enable_ir_printing: bool = False):
        saved, sys.stderr = sys.stderr, io.StringIO()          # where the diagnostics are printed
        try:
            with module.context as context:
                context.emit_error_diagnostics = True
                PassManager.parse(pipeline).run(module.operation)
        except Exception as err:
            raise compiler_utils.TorchMlirCompilerError(f"{description} failed with the following diagnostics:\n"
                                         f"{sys.stderr.getvalue()}\npython exception: {err}") from None
        finally:
            sys.stderr = saved

    fx.run_pipeline_with_repro_report = compiler_utils.run_pipeline_with_repro_report = run


def main(argv: list[str]) -> int:
    program, out, weights_file = argv
    import torch
    from torch_mlir import fx

    from torch_mlir.extras.fx_decomp_util import get_decomposition_table
    from .decompositions import LEGAL_OPS, for_import

    mapped = Mapped(weights_file)                  # the program's tensors, written by the parent

    def load():
        ep = torch.export.load(program)
        mapped.restore(ep, weights_file)
        return ep

    hooks = _weight_hooks(mapped)
    _without_reproducer_print()
    try:
        ep = for_import(load, get_decomposition_table())
        module = fx.export_and_import(ep, output_type="linalg-on-tensors", func_name="main", hooks=hooks,
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
    offsets = append_weights(hooks, weights_file)
    if offsets:
        _external(module, weights_file, offsets)
    text = module.operation.get_asm(large_resource_limit=0)           # the blobs live in the weights file
    if set(_RESOURCE.findall(text)) - set(offsets):                    # a blob torch-mlir made itself
        text = module.operation.get_asm()
    with open(out, "w") as f:
        f.write(text)
    return 0


def _load() -> None:
    """What every import needs (~3.5 s of a cold start): loaded by a spare child while the parent exports."""
    import torch  # noqa: F401
    from torch_mlir import fx  # noqa: F401
    from torch_mlir.extras import fx_decomp_util, fx_importer  # noqa: F401

    from . import decompositions  # noqa: F401


if __name__ == "__main__":
    job = spare_job(sys.argv[1:], _load)
    sys.exit(0 if job is None else main(job))
