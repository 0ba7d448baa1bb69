"""A PyTorch module -> linalg-on-tensors MLIR text, with the workarounds real models need.

torch.export runs here (the module lives in this process); torch-mlir's import runs in a child
(import_worker.py). Built-in workarounds, each for a failure seen on transformers models:
- non-persistent buffers (BERT's `position_ids`) are made persistent: torch-mlir looks buffers up in
  the state dict only ("Could not find state mapping for buffer");
- scaled_dot_product_attention is traced as its math (matmul, softmax, matmul): the fused op's
  decomposition leaves a strided result that a later view cannot take (GPT-2: "Cannot view a tensor
  with shape ... as a tensor with shape ...");
- every `dynamic_shapes` entry keeps its declared range, read back from the exported program.
"""
from __future__ import annotations

import contextlib
import dataclasses
import io
import math
import operator
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import sympy
import torch
from torch.utils._sympy.numbers import int_oo
from torch.utils._sympy.value_ranges import bound_sympy

from .. import settings
from ..backends import child_process
from ..errors import CompileError
from ..runtime import shape_rules
from . import import_worker, program_tensors

IMPORT_TIMEOUT_S = 3600.0


class UnsupportedModel(CompileError):
    """The model holds an op the route torch.export -> torch-mlir -> upstream MLIR cannot compile."""


class PinnedDims(UnsupportedModel):
    """Dims declared dynamic that the compiled code fixes to one size. Seen: torch-mlir 20261001 types a
    3-D `linear` as [?, 1, N] when both its batch and sequence dims are dynamic, and casts to it."""

    def __init__(self, message: str, dims: list):
        super().__init__(message)
        self.dims = dims                      # the DimRanges the code fixed


class NarrowTrace(UnsupportedModel):
    """Dims the compiled code serves at some sizes of their declared ranges only: torch.export followed
    a branch of the model that holds at the example's sizes (check_range_ends)."""

    def __init__(self, message: str, dims: list[tuple[int, int]], program=None):
        super().__init__(message)
        self.dims = dims                      # (input, dim) pairs
        self.program = program                # the exported program those dims are of


@dataclasses.dataclass(frozen=True)
class DimRange:
    """Where dim `dim` of tensor input `input` may vary: min..max inclusive (max None: unbounded), in
    steps of `step` from min (a derived dim, `10*L`: what torch.export asks of strided convolutions)."""
    input: int
    dim: int
    name: str
    min: int
    max: int | None
    step: int = 1


def attention_math(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                   enable_gqa=False):
    """torch.nn.functional.scaled_dot_product_attention, written out (the reference formula)."""
    scale = 1.0 / math.sqrt(query.size(-1)) if scale is None else scale
    if enable_gqa:
        repeat = query.size(-3) // key.size(-3)
        key, value = key.repeat_interleave(repeat, -3), value.repeat_interleave(repeat, -3)
    scores = torch.matmul(query, key.transpose(-2, -1)) * scale
    if is_causal:
        keep = torch.ones(query.size(-2), key.size(-2), dtype=torch.bool, device=query.device).tril()
        scores = scores.masked_fill(~keep, float("-inf"))
    if attn_mask is not None:
        scores = scores.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool \
            else scores + attn_mask
    weights = torch.softmax(scores, dim=-1)
    if dropout_p:
        weights = torch.dropout(weights, dropout_p, True)
    return torch.matmul(weights, value)


# torch.export is not thread-safe ("Trying to pop empty mode stack"), and _exportable patches a torch
# global: one export at a time in this process, whichever thread asks.
_EXPORT_LOCK = threading.RLock()


@contextlib.contextmanager
def _exportable(module: torch.nn.Module):
    """The module in eval mode, with every buffer persistent and attention traced as its math; all
    restored after, also when the export fails."""
    saved = [(sub, set(sub._non_persistent_buffers_set), sub.training) for sub in module.modules()]
    fused = torch.nn.functional.scaled_dot_product_attention
    try:
        for sub, _, _ in saved:
            sub._non_persistent_buffers_set.clear()
            sub.training = False
        torch.nn.functional.scaled_dot_product_attention = attention_math
        yield module
    finally:
        torch.nn.functional.scaled_dot_product_attention = fused
        for sub, names, training in saved:
            sub._non_persistent_buffers_set.update(names)
            sub.training = training


def export(module: torch.nn.Module, args: tuple, kwargs: dict | None = None, dynamic_shapes=None):
    """torch.export of the module in eval mode (its own mode restored after), without gradients."""
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"ftuner_mlir.torch.compile takes a torch.nn.Module, got {type(module).__name__}")
    _refuse_half_precision(module, args, kwargs)
    with _EXPORT_LOCK, _exportable(module), torch.no_grad():
        try:
            program = torch.export.export(module, tuple(args), kwargs or {}, dynamic_shapes=dynamic_shapes)
        except Exception as err:
            raise UnsupportedModel(f"torch.export failed: {type(err).__name__}: {_first_lines(err)}") from err
        _drop_guards(program)
        _drop_derived_ranges(program)
        _sym_sums_as_adds(program)
        _sym_powers_as_products(program)
        return program


HALF_PRECISION = (torch.bfloat16, torch.float16)


def named_tensors(module: torch.nn.Module, args: tuple, kwargs: dict | None) -> list[tuple[str, torch.Tensor]]:
    """(name, tensor) of every parameter, buffer and tensor input, named as an error message does."""
    named = list(module.named_parameters()) + list(module.named_buffers())
    named += [(f"input #{i}", a) for i, a in enumerate(args)] + [(f"input {k!r}", v) for k, v in (kwargs or {}).items()]
    return [(name, value) for name, value in named if isinstance(value, torch.Tensor)]


def _refuse_half_precision(module: torch.nn.Module, args: tuple, kwargs: dict | None) -> None:
    """A model cast to bf16 or fp16 computes its softmax, norms and activations in that type, which the
    CPU pipeline has no code for: refused here, naming a tensor, instead of failing inside LLVM
    (ftuner_mlir.torch.compile hands this function a bf16 model's fp32 twin: bf16_models.py)."""
    for name, value in named_tensors(module, args, kwargs):
        if value.dtype in HALF_PRECISION:
            raise UnsupportedModel(
                f"{name} is {value.dtype}: this route does not compile models in bf16 or fp16 yet. "
                f"ftuner_mlir.torch.compile takes a bf16 model, or compile the fp32 model with "
                f"matmul_precision='bf16' to run its matmuls in bf16 on AMX (softmax, norms and the "
                f"residual stream stay fp32, as torch.autocast does)")


def _first_lines(err: Exception, n: int = 6) -> str:
    return "\n".join(str(err).strip().splitlines()[:n])


def _finite(bound) -> int | None:
    """The bound as an int; None when unbounded (torch's int_oo calls itself finite)."""
    return None if bound in (sympy.oo, -sympy.oo, int_oo, -int_oo) else int(bound)


def user_input_nodes(program) -> list:
    """The placeholders of the program's user inputs (not its lifted parameters and buffers), in order."""
    names = set(program.graph_signature.user_inputs)
    return [n for n in program.graph.nodes if n.op == "placeholder" and n.name in names]


def dim_ranges(program) -> list[DimRange]:
    """The dynamic dims of the program's tensor inputs, with their ranges (a symbol of one value is static)."""
    out = []
    for i, d, expr in _symbolic_dims(program):
        r = bound_sympy(expr, program.range_constraints)
        low, high = max(_finite(r.lower) or 0, 0), _finite(r.upper)
        if low != high:            # one value: static, whatever made it a symbol (Dynamo's channels = 3)
            linear = _linear(expr)
            out.append(DimRange(i, d, str(expr), low, high, linear[1] if linear and linear[1] > 1 else 1))
    return out


def _symbolic_dims(program) -> list[tuple]:
    """(input, dim, sympy expression) of every symbolic dim of the program's tensor inputs."""
    tensors = [n for n in user_input_nodes(program) if isinstance(n.meta.get("val"), torch.Tensor)]
    return [(i, d, size.node.expr) for i, node in enumerate(tensors) for d, size in enumerate(node.meta["val"].shape)
            if isinstance(size, torch.SymInt)]


def _linear(expr) -> tuple | None:
    """(s, a, b) when expr is a*s + b of one symbol s, a and b integers, a != 0; else None."""
    if len(expr.free_symbols) != 1:
        return None
    (symbol,) = expr.free_symbols
    a = expr.coeff(symbol)
    b = sympy.expand(expr - a * symbol)
    return (symbol, int(a), int(b)) if a.is_Integer and b.is_Integer and a != 0 else None


def check_dynamic_dims(rules: dict, ranges: list[DimRange]) -> None:
    """Every dim declared dynamic must stay dynamic in the compiled function's shape rules."""
    pinned, reasons = [], []
    for r in ranges:
        cls = rules["arg_dims"][r.input][r.dim]
        if cls in rules["class_static"]:
            pinned.append(r)
            reasons.append(f"dim {r.dim} of input #{r.input} (declared dynamic, {r.min}..{r.max or ''}) is fixed "
                           f"to {rules['class_static'][cls]} by {rules['class_reason'].get(cls, 'the lowered code')}")
    if pinned:
        raise PinnedDims("the compiled code cannot serve every shape declared dynamic: " + "; ".join(reasons) +
                         " (torch-mlir's lowering typed it static; declare fewer dims dynamic)", pinned)


def check_example(rules: dict, args: tuple, kwargs: dict | None) -> None:
    """The compiled code must accept the inputs it was exported with: shape rules that refuse them
    (a static size computed wrongly from dynamic ones) would make a module that refuses every call."""
    try:
        shape_rules.bind(rules, _shapes(args, kwargs))
    except ValueError as err:
        raise UnsupportedModel(f"the compiled code refuses the export's own example inputs ({err}): its shape "
                               f"rules do not describe the model; please report it with the model") from None


def check_range_ends(rules: dict, program, args: tuple, kwargs: dict | None) -> None:
    """The compiled code must accept each declared dim at both ends of its range (the other dims as in
    the example): torch.export traces the branches the example takes, and a branch that holds only at
    the example's sizes (a ViT exported at its own image size skips the interpolation of its position
    embeddings) leaves a static size that refuses every other shape. Caught here, not at a call."""
    example = _shapes(args, kwargs)
    dims = _symbolic_dims(program)
    known = _symbol_values(dims, example)
    refused, reasons = [], []
    for symbol, bounds in program.range_constraints.items():
        if symbol not in known:
            continue
        for value in {max(_finite(bounds.lower) or 1, 1), _finite(bounds.upper)} - {None, known[symbol]}:
            trial = [list(shape) for shape in example]
            moved = [(i, d) for i, d, expr in dims if symbol in expr.free_symbols]
            for i, d, expr in dims:
                if (i, d) in moved:
                    trial[i][d] = int(expr.subs(symbol, value).subs(known))
            try:
                shape_rules.bind(rules, trial)
            except ValueError as err:
                refused += [m for m in moved if m not in refused]
                reasons.append(", ".join(f"dim {d} of input #{i} = {trial[i][d]}" for i, d in moved) + f" ({err})")
                break
    if refused:
        raise NarrowTrace(
            f"the compiled code refuses {'; '.join(reasons)}, inside the declared ranges, with the other sizes "
            f"as in the example: torch.export followed a branch of the model that holds only at the example's "
            f"sizes; export with an example that takes the general path (other sizes), or declare a narrower "
            f"range", refused, program)


def check_shapes(rules: dict, program, args: tuple, kwargs: dict | None) -> None:
    """Every check of the compiled function's shape rules against what was declared and exported."""
    check_dynamic_dims(rules, dim_ranges(program))
    check_example(rules, args, kwargs)
    check_range_ends(rules, program, args, kwargs)


def general_example(program, args: tuple, kwargs: dict | None, dims: list[tuple[int, int]]):
    """The example inputs (args, kwargs) moved off the sizes where torch.export took a narrow branch
    (NarrowTrace's `dims`): each symbol of those dims to another value of its range, a different step
    per symbol (a ViT skips its interpolation when height == width == its config's size), each tensor
    tiled or cut to its new sizes, so its values stay the kind the model reads (ids, masks, pixels).
    None when a symbol has no other value, or a dim is not a*s + b of known symbols."""
    example, symbolic = _shapes(args, kwargs), _symbolic_dims(program)
    known = _symbol_values(symbolic, example)
    dims = set(dims)
    narrow = {s for i, d, expr in symbolic if (i, d) in dims for s in expr.free_symbols}
    if not narrow or not narrow <= known.keys():
        return None
    values = dict(known)
    for k, symbol in enumerate(sorted(narrow, key=str)):
        bounds = program.range_constraints[symbol]
        low, high = max(_finite(bounds.lower) or 1, 1), _finite(bounds.upper)
        steps = (k + 1, -(k + 1), *range(1, 9), *range(-1, -9, -1))
        moved = [known[symbol] + step for step in steps if low <= known[symbol] + step <= (high or math.inf)]
        if not moved:
            return None
        values[symbol] = moved[0]
    shapes = [list(shape) for shape in example]
    for i, d, expr in symbolic:
        if not expr.free_symbols <= values.keys():
            return None
        shapes[i][d] = int(expr.subs(values))
    leaves, spec = torch.utils._pytree.tree_flatten((tuple(args), kwargs or {}))
    sizes = iter(shapes)
    leaves = [_resized(leaf, next(sizes)) if isinstance(leaf, torch.Tensor) else leaf for leaf in leaves]
    moved_args, moved_kwargs = torch.utils._pytree.tree_unflatten(leaves, spec)
    return moved_args, (moved_kwargs if kwargs is not None else None)


def _resized(tensor: torch.Tensor, shape: list[int]) -> torch.Tensor:
    """`tensor` tiled along each dim that grows and cut along each that shrinks, to `shape`."""
    for d, size in enumerate(shape):
        if tensor.shape[d] not in (size, 0):
            repeats = [1] * tensor.dim()
            repeats[d] = -(-size // tensor.shape[d])
            tensor = tensor.repeat(*repeats).narrow(d, 0, size)
    return tensor.contiguous()


def imported_rules(text: str) -> dict:
    """The shape rules of the imported text's public function, read from the text alone (tens of ms):
    the checks run before the compile, so a model they refuse costs no compile."""
    from mlir import ir

    from ..analysis.signature import analyze

    with ir.Context():
        return analyze(ir.Module.parse(text).operation)["main"].rules()


def _symbol_values(dims, example) -> dict:
    """Each symbol's value in the example, from the dims that are a*s + b of it alone."""
    known = {}
    for i, d, expr in dims:
        linear = _linear(expr)
        if linear:
            symbol, a, b = linear
            known.setdefault(symbol, (example[i][d] - b) // a)
    return known


def _shapes(args: tuple, kwargs: dict | None) -> list[tuple]:
    leaves = torch.utils._pytree.tree_leaves((args, kwargs or {}))
    return [tuple(t.shape) for t in leaves if isinstance(t, torch.Tensor)]


def _drop_guards(program) -> None:
    """torch.export keeps its shape guards as Python code (`_guards_code`) that `run_decompositions`
    turns into a `_guards_fn` call; code written for Dynamo's frame (`L['inputs']`) fails there with a
    NameError. The compiled module checks the declared ranges and its own shape rules instead."""
    program._guards_code = []


def _drop_derived_ranges(program) -> None:
    """torch.export keeps a derived dim's range (`10*s38`) beside its symbol's; a program saved with one
    cannot be retraced once loaded (torch's _replace_unbacked_bindings: "expected sympy.Symbol"). It
    follows from the symbol's range (dim_ranges bounds the expression): drop it."""
    program._range_constraints = {k: v for k, v in program.range_constraints.items() if isinstance(k, sympy.Symbol)}


def _sym_sums_as_adds(program) -> None:
    """`torch.sym_sum` (what `sum()` of sizes becomes under Dynamo) as a chain of adds: torch.export
    cannot save it ("op sym_sum is not in _SYM_OPS")."""
    graph = program.graph
    for node in [n for n in graph.nodes if n.op == "call_function" and n.target is torch.sym_sum]:
        _as_chain(graph, node, operator.add, list(node.args[0]))
    graph.lint()


def _sym_powers_as_products(program) -> None:
    """`size ** k` of a size (k a small positive integer: a square image's patch count, `(h // 16) ** 2`) as
    a chain of multiplies: torch-mlir's import has no symbolic pow ("Unsupported builtin function for
    symbolic types: <built-in function pow>")."""
    graph = program.graph
    for node in [n for n in graph.nodes if n.op == "call_function" and n.target is operator.pow]:
        base, exponent = node.args
        if isinstance(base, torch.fx.Node) and isinstance(_value(base), torch.SymInt) \
                and isinstance(exponent, int) and 1 <= exponent <= 8:
            _as_chain(graph, node, operator.mul, [base] * exponent)
    graph.lint()


def _as_chain(graph, node, op, terms: list) -> None:
    """`node` replaced by op(...op(op(terms[0], terms[1]), terms[2])...), each step's value recorded."""
    total = terms[0]
    with graph.inserting_before(node):
        for term in terms[1:]:
            value = op(_value(total), _value(term))
            total = graph.call_function(op, (total, term))
            total.meta["val"] = value
    node.replace_all_uses_with(total)
    graph.erase_node(node)


def _value(arg):
    return arg.meta["val"] if isinstance(arg, torch.fx.Node) else arg


@contextlib.contextmanager
def import_folder():
    """A scratch folder for torch-mlir's import (removed after): it holds the weights file the imported
    text names, so it must outlive the compile of that text."""
    try:
        folder = child_process.scratch_dir("ftuner-torch-")
    except OSError as err:
        raise CompileError(f"cannot create a folder in the temporary directory {tempfile.gettempdir()}: "
                           f"{err.strerror or err} (set TMPDIR to a writable folder)") from None
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


IMPORT_WORKER = [sys.executable, "-m", "ftuner_mlir.torch.import_worker"]


@contextlib.contextmanager
def spare_importer():
    """An import child started now, loading torch and torch-mlir (~3.5 s) while this process exports
    and looks the program up in the caches; ended unused if the module was found."""
    spare = child_process.Spare(IMPORT_WORKER)
    try:
        yield spare
    finally:
        spare.close()


def to_linalg(program, folder: Path, timeout_s: float = IMPORT_TIMEOUT_S,
              importer: child_process.Spare | None = None) -> str:
    """The exported program as linalg-on-tensors text (torch-mlir, in a child process: `importer`, a
    spare started earlier, or a new one). The weights go to a file of their own in `folder`
    (weights-*.bin) as raw bytes, never into the text: the text names that file (ir/weights.py). Each
    call writes a new file, so texts exported into one folder never share, or overwrite, each other's
    weights."""
    _drop_guards(program)
    saved, text = folder / "program.pt2", folder / "program.mlir"
    try:
        handle, name = tempfile.mkstemp(prefix="weights-", suffix=".bin", dir=folder)
        os.close(handle)
        weights = Path(name)
        program_tensors.write(program, weights)
    except OSError as err:
        raise CompileError(f"cannot write the exported program into {folder}: {err.strerror or err} "
                           f"(set TMPDIR to a writable folder with room for the model)") from None
    with program_tensors.stand_ins(program):
        _save(program, saved)
    try:
        job = [str(saved), str(text), str(weights)]
        proc = importer.run(job, timeout_s) if importer else child_process.run([*IMPORT_WORKER, *job], timeout_s)
    except subprocess.TimeoutExpired:
        raise CompileError(f"torch-mlir's import ran past {timeout_s:.0f} s") from None
    finally:
        saved.unlink(missing_ok=True)
    if proc.returncode == import_worker.UNSUPPORTED_EXIT:
        if settings.torch_verbose():
            sys.stderr.write(proc.stderr)
        raise UnsupportedModel(proc.stderr.strip().splitlines()[-1].removeprefix("unsupported: "))
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
        raise CompileError(f"torch-mlir's import failed (exit code {proc.returncode}):\n{tail}")
    return text.read_text()


def _save(program, path: Path) -> None:
    """torch.export.save through memory: written straight to a full disk, torch's serializer aborts the
    process (measured: SIGABRT); a Python write fails with an OSError, reported with the folder."""
    data = io.BytesIO()
    torch.export.save(program, data)
    try:
        path.write_bytes(data.getbuffer())
    except OSError as err:
        raise CompileError(f"cannot write the exported program into {path.parent}: {err.strerror or err} "
                           f"(set TMPDIR to a writable folder with room for the model)") from None
