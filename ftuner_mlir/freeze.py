"""`freeze_arguments()`: arguments a caller promises never to change (a layer's weights) become module
constants, so compilation does the work that depends only on them.

In the spirit of oneDNN's weight prepacking and MKL's `cblas_sgemm_pack`, but at compile time: a frozen
matmul B is packed into the uKernels' micro-panels once (codegen/weight_panels.py, as for the weights
torch-mlir exports), and calls pass only the other arguments, with no per-call transpose or pack. The
frozen values are part of the module text, so the compiled module is cached per value like any other.

    text = ftuner_mlir.freeze_arguments(models.dense(2304, 768), {1: weight})
    exe = ftuner_mlir.compile(text)
    y = exe(x)                      # x . weight^T
"""
from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import tensor
from mlir.passmanager import PassManager

from .errors import CompileError
from .ir.diagnostics import format_mlir_error
from .ir.resources import ELEMENT_DTYPES, blob_constant, is_kind
from .ir.walk import public_functions


def freeze_arguments(source: str, values: dict[int, np.ndarray], function: str | None = None) -> str:
    """MLIR text in which the public function (the only one, or `function`) takes its arguments at the
    indices of `values` no more: each becomes a constant holding the given array (its dtype and every
    static dim must match the argument's type; a dynamic dim takes the array's size). Raises
    ValueError naming the argument, CompileError for text that does not parse."""
    if not isinstance(source, str):
        raise TypeError(f"freeze_arguments() takes MLIR text (str), got {type(source).__name__}")
    if not isinstance(values, dict) or not values:
        raise ValueError("freeze_arguments() needs a non-empty dict {argument index: numpy array}")
    with ir.Context() as context, ir.Location.unknown():
        try:
            module = ir.Module.parse(source)
        except ir.MLIRError as err:
            raise CompileError(format_mlir_error(err)) from None
        fn = _function(module, function)
        arguments = list(fn.regions[0].blocks[0].arguments)
        frozen = {_index(i, len(arguments), fn): _checked(array, arguments[i].type, i, fn)
                  for i, array in values.items()}
        with ir.InsertionPoint.at_block_begin(fn.regions[0].blocks[0]):
            for i, array in sorted(frozen.items()):
                argument = arguments[i]
                constant = blob_constant(array, f"ftuner_frozen_{_name(fn)}_{i}",
                                         ir.RankedTensorType(argument.type).element_type)
                if constant.type != argument.type:       # dynamic dims: the uses see the type they had
                    constant = tensor.CastOp(argument.type, constant).result
                argument.replace_all_uses_with(constant)
        _drop_arguments(fn, sorted(frozen))
        # casts of the constants fold into their users, which then see static operands
        PassManager.parse("builtin.module(canonicalize)", context).run(module.operation)
        return str(module)


def _function(module, name: str | None):
    publics = public_functions(module.operation)
    names = [_name(f) for f in publics]
    if name is None:
        if len(publics) != 1:
            raise ValueError(f"the module has {len(publics)} public functions {names}: name one (function=...)")
        return publics[0]
    if name not in names:
        raise ValueError(f"no public function @{name}; have {names}")
    return publics[names.index(name)]


def _name(fn) -> str:
    return ir.StringAttr(fn.attributes["sym_name"]).value


def _index(i, count: int, fn) -> int:
    if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < count:
        raise ValueError(f"@{_name(fn)} has arguments #0..#{count - 1}; cannot freeze argument {i!r}")
    return i


def _checked(array, arg_type: ir.Type, i: int, fn) -> np.ndarray:
    where = f"@{_name(fn)}: argument #{i}"
    if not isinstance(array, np.ndarray):
        raise ValueError(f"{where} must be frozen to a numpy.ndarray, got {type(array).__name__}")
    if not is_kind(ir.RankedTensorType, arg_type):
        raise ValueError(f"{where} is a {arg_type}, not a ranked tensor: it cannot be frozen")
    kind = ir.RankedTensorType(arg_type)
    dtype = ELEMENT_DTYPES.get(str(kind.element_type))
    if dtype is None or array.dtype != dtype:
        raise ValueError(f"{where} has element type {kind.element_type}; got an array of dtype {array.dtype}")
    if array.ndim != kind.rank or any(s != d for s, d in zip(kind.shape, array.shape)
                                      if s != ir.ShapedType.get_dynamic_size()):
        raise ValueError(f"{where} has type {arg_type}; got an array of shape {array.shape}")
    return np.ascontiguousarray(array)


def _drop_arguments(fn, indices: list[int]) -> None:
    """Remove the (now unused) block arguments and their entries in the function type and attributes."""
    block = fn.regions[0].blocks[0]
    for i in reversed(indices):
        block.erase_argument(i)
    kind = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    keep = [t for j, t in enumerate(kind.inputs) if j not in indices]
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(keep, kind.results))
    if "arg_attrs" in fn.attributes:
        attrs = list(ir.ArrayAttr(fn.attributes["arg_attrs"]))
        fn.attributes["arg_attrs"] = ir.ArrayAttr.get([a for j, a in enumerate(attrs) if j not in indices])
