"""ftuner-tile: rewrite each op carrying `ftuner.ukernels` into a call to its dispatch function.

The dispatch function (see codegen/matmul.py) chooses the cache block from the runtime dims and covers
the iteration space exactly with static uKernel tiles: body tiles plus binary remainder strips.
"""
from __future__ import annotations

import dataclasses

from mlir import ir
from mlir.dialects import func, memref

from ..codegen import bf16_matmul, conv2d, gpu_matmul, weight_panels
from ..codegen.matmul import dispatch_name, emit_all
from ..ir.attributes import AMX_ATTR, ATTR, GPU_ATTR
from ..ir.build import cast
from ..ir.codecs import amx_set_from_attr, gpu_set_from_attr, ukernel_set_from_attr
from ..ir.diagnostics import PassFailure, location_of
from ..ir.match import classify, classify_conv, conv_gemm
from ..ir.symbols import add_functions, symbols
from ..ir.walk import defining_op, walk
from .base import ModulePass


def _dynamic(t: ir.Type, keep_last: bool = False) -> ir.Type:
    """`t` with every dim dynamic (but the last with `keep_last`: the width of B's micro-panels)."""
    rt = ir.RankedTensorType(t)
    shape = [ir.ShapedType.get_dynamic_size()] * rt.rank
    if keep_last:
        shape[-1] = rt.shape[-1]
    return ir.RankedTensorType.get(shape, rt.element_type)


def _dynamic_memref(t: ir.Type) -> ir.Type:
    layout = ir.StridedLayoutAttr.get(ir.ShapedType.get_dynamic_stride_or_offset(),
                                      [ir.ShapedType.get_dynamic_stride_or_offset()] * t.rank)
    return ir.MemRefType.get([ir.ShapedType.get_dynamic_size()] * t.rank, t.element_type, layout)


def _checked_set(op, attr: str, parse, on_buffers: bool):
    """The uKernel set in `attr`, checked against the op it is attached to."""
    try:
        uks = parse(op.attributes[attr])
    except ValueError as err:
        raise PassFailure(location_of(op), str(err)) from None
    kind = classify(op)
    if kind is None or bool(op.results) == on_buffers:
        hint = "; GPU uKernels are tiled on buffers: run ftuner-bufferize first" if on_buffers else ""
        raise PassFailure(location_of(op), f"{attr} is attached to an op this pass cannot tile "
                                           f"('{op.operation.name}' with these operand types/maps){hint}")
    if kind != (uks.family, uks.dtype):
        raise PassFailure(location_of(op), f"{attr} describes a {uks.dtype} {uks.family} but the op "
                                           f"is a {kind[1]} {kind[0]}")
    return uks


def _zero_fill_destination(value: ir.Value) -> ir.Value | None:
    """The destination tensor of `linalg.fill(0.0)` when `value` is its result, else None."""
    owner = defining_op(value)
    if owner is None or owner.name != "linalg.fill":
        return None
    scalar = defining_op(owner.operands[0])
    if scalar is None or scalar.name != "arith.constant":
        return None
    attr = scalar.attributes["value"]
    if not isinstance(attr, ir.FloatAttr) or ir.FloatAttr(attr).value != 0.0:
        return None
    return owner.operands[1]


@dataclasses.dataclass(frozen=True)
class Tile(ModulePass):
    name = "ftuner-tile"
    summary = "Rewrite annotated ops into runtime shape dispatch over static uKernel tiles (body + remainders)"

    def apply(self, module_op) -> None:
        present = symbols(module_op)
        for op in [o for o in walk(module_op) if ATTR in o.attributes or GPU_ATTR in o.attributes]:
            for gemm in self._conv_to_gemm(op) if classify_conv(op) is not None else [op]:
                if GPU_ATTR in gemm.attributes:
                    self._rewrite_gpu(module_op, present, gemm)
                else:
                    self._rewrite(module_op, present, gemm)
        for op in [o for o in walk(module_op) if AMX_ATTR in o.attributes]:
            self._rewrite_amx(module_op, present, op)

    def _conv_to_gemm(self, op):
        """A conv2d becomes im2col + GEMMs with the conv's uKernel tiles (codegen/conv2d.py); the matmuls
        are returned, to be tiled like any other."""
        try:
            uks = ukernel_set_from_attr(op.attributes[ATTR])
        except ValueError as err:
            raise PassFailure(location_of(op), str(err)) from None
        kind = conv_gemm(op)
        if kind != (uks.family, uks.dtype):
            got = f"a {kind[1]} conv2d tiled as {kind[0]}" if kind else "a conv2d the uKernels cannot serve " \
                "(tensors of one element type f32/f64, a static filter)"
            raise PassFailure(location_of(op), f"{ATTR} describes a {uks.dtype} {uks.family} but the op is {got}")
        fam, strides, dilations = classify_conv(op)
        with ir.InsertionPoint(op), op.location:
            result, gemms = conv2d.emit_gemm(op, fam, strides, dilations, uks)
        op.results[0].replace_all_uses_with(result)
        op.operation.erase()
        return gemms

    def _rewrite_gpu(self, module_op, present: set[str], op) -> None:
        """A matmul on buffers becomes a call to the host dispatch that launches the GPU kernels."""
        uks = _checked_set(op, GPU_ATTR, gpu_set_from_attr, on_buffers=True)
        add_functions(module_op, present, gpu_matmul.dispatch_name(uks), lambda: gpu_matmul.emit_all(uks),
                       op.location)
        module_op.attributes["gpu.container_module"] = ir.UnitAttr.get()
        with ir.InsertionPoint(op), op.location:
            operands = [memref.CastOp(_dynamic_memref(v.type), v).result for v in op.operands]
            func.CallOp([], ir.FlatSymbolRefAttr.get(gpu_matmul.dispatch_name(uks)), operands)
        op.operation.erase()

    def _rewrite_amx(self, module_op, present: set[str], op) -> None:
        """A bf16 matmul becomes a call to its AMX dispatch, a placeholder on tensors until bufferization
        (codegen/bf16_matmul.py; lowering/buffers/amx_bodies.py gives it its AMX body)."""
        aset = _checked_set(op, AMX_ATTR, amx_set_from_attr, on_buffers=False)
        a, b, init = op.operands
        storage = _zero_fill_destination(init)
        weight = defining_op(b)
        packed = None if aset.batched else weight_panels.amx_packed_weight(op, aset.transpose_b)
        half = None
        if packed is not None:          # a constant weight: VNNI panels once, here, not per call
            b, half = packed
        callee = bf16_matmul.dispatch_name(aset, storage is not None, half)
        add_functions(module_op, present, callee, lambda: {callee: lambda: bf16_matmul.emit_placeholder(
            aset, storage is not None, half)}, op.location)
        self._call(op, callee, [a, b, init if storage is None else storage])
        if packed is not None:
            _drop_if_unused(weight)

    def _call(self, op, callee: str, operands, keep_last=None) -> None:
        """Replace `op` by a call of `callee` on `operands` with every dim dynamic but the last of
        `keep_last` (the width of B's micro-panels), cast back to the op's result type."""
        with ir.InsertionPoint(op), op.location:
            result_type = op.results[0].type
            call = func.CallOp([_dynamic(result_type)], ir.FlatSymbolRefAttr.get(callee),
                               [cast(v, _dynamic(v.type, keep_last=v is keep_last)) for v in operands])
            result = cast(call.results[0], result_type)
        op.results[0].replace_all_uses_with(result)
        op.operation.erase()

    def _rewrite(self, module_op, present: set[str], op) -> None:
        """A matmul on tensors becomes a call to its dispatch function (on tensors). When its init is a
        zero fill, the dispatch that overwrites C is called on the fill's destination instead (the fill's
        pass over C disappears when nothing else uses it). A constant B is packed into micro-panels here,
        once (codegen/weight_panels.py); the dispatch then reads them in place."""
        uks = _checked_set(op, ATTR, ukernel_set_from_attr, on_buffers=False)
        a, b, init = op.operands
        storage = _zero_fill_destination(init)
        zero_init = storage is not None
        weight = defining_op(b)
        packed = weight_panels.packed_weight(op, uks)
        if packed is not None:
            b, uks = packed
        callee = dispatch_name(uks, zero_init, prepacked=packed is not None)
        add_functions(module_op, present, callee, lambda: emit_all(uks, zero_init, prepacked=packed is not None),
                       op.location)
        self._call(op, callee, [a, b, storage if zero_init else init], keep_last=b if packed is not None else None)
        if packed is not None:
            _drop_if_unused(weight)


def _drop_if_unused(weight) -> None:
    """A weight packed into panels: erased when nothing reads it as stored any more."""
    if not list(weight.results[0].uses):
        weight.erase()
