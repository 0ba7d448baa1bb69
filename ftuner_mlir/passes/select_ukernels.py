"""ftuner-select-ukernels: attach the uKernel set chosen by the hardware model to each supported op."""
from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
from mlir import ir

from ..ir.attributes import AMX_ATTR, ATTR, GPU_ATTR
from ..ir.build import family_matmul, widen
from ..ir.codecs import amx_set_to_attr, gpu_set_to_attr, ukernel_set_to_attr
from ..ir.match import classify, conv_gemm
from ..ir.resources import blob_constant, constant_array
from ..ir.walk import defining_op, walk
from ..lowering.dispatch.early_rounding import rounded_at_source
from ..lowering.graph.convolutions import rewrite_convolutions
from ..tuning.db import chosen_tile
from ..ukernel.bf16_space import engine_in_use, select_bf16
from ..ukernel.gpu_space import select_gpu
from ..ukernel.space import RegisterTile, UKernelSet, select
from .base import MAX_FORCED_COLUMNS, MAX_FORCED_ROWS, ModulePass, option


@dataclasses.dataclass(frozen=True)
class SelectUKernels(ModulePass):
    name = "ftuner-select-ukernels"
    summary = ("Attach the uKernel set (attribute ftuner.ukernels) to each matmul-family op and each conv2d (the set "
               "of the GEMM it is tiled as): the measured best register tile from the tuning database when there "
               "is one, else the analytic best")
    mr: int = option(0, "force the body tile's rows (with nr; 0 = measured or analytic choice)", minimum=0,
                     maximum=MAX_FORCED_ROWS)
    nr: int = option(0, "force the body tile's columns (with mr)", minimum=0, maximum=MAX_FORCED_COLUMNS)
    tuning: bool = option(True, "use the tuning database (also off with FTUNER_NO_TUNING=1)")
    matmul_precision: str = option("f32", "bf16: fp32 matmuls run on the bf16 matrix engine (operands rounded to bf16, "
                                   "fp32 accumulation and result) where the target has a bf16 engine faster than its fp32 FMAs (AMX, or "
                                   "AVX512-BF16 on Zen 4/5); everything else stays fp32",
                                   choices=("f32", "bf16"))

    def tile_for(self, target, dtype: str) -> RegisterTile | None:
        try:
            tile = chosen_tile(target, dtype, self.mr, self.nr, self.tuning)
        except ValueError as err:
            raise ValueError(f"{self.name}: {err}") from None
        return RegisterTile(*tile) if tile else None

    def apply(self, module_op) -> None:
        target = self.resolved_target()
        if target.kind == "gpu":
            return self.run_gpu(module_op, target)
        rewrite_convolutions(module_op)               # into the ops the uKernels (or the row code) serve
        for op in list(walk(module_op)):
            read_transposed_operands(op)
        engine = engine_in_use(target)[0]
        if self.matmul_precision == "bf16" and engine != "none":
            rounded = _RoundedOnce()
            for op in [op for op in walk(module_op) if op.results and (classify(op) or ("", ""))[1] == "f32"]:
                retype_operands(op, classify(op)[0], lambda v, op=op: rounded(v, op.operation.block))
        for op, (family, dtype) in [(op, classify(op)) for op in walk(module_op) if classify(op)]:
            if dtype != "bf16" or not op.results or AMX_ATTR in op.attributes:
                continue
            if engine != "none":                        # AMX or AVX512-BF16 uKernels serve every matmul family
                op.attributes[AMX_ATTR] = amx_set_to_attr(select_bf16(target, family))
            else:                                       # no matrix engine for it (yet): the fp32 uKernels
                retype_operands(op, family, _widened_to_f32)
        cache: dict[tuple[str, str], UKernelSet] = {}
        for op in list(walk(module_op)):
            kind = classify(op) or conv_gemm(op)        # a conv2d gets the set of the GEMM it becomes
            if kind is None or kind[1] == "bf16" or not op.results or ATTR in op.attributes:
                continue                                # select on tensors only
            if kind not in cache:
                cache[kind] = select(target, *kind, tile=self.tile_for(target, kind[1]))
            op.attributes[ATTR] = ukernel_set_to_attr(cache[kind])

    def run_gpu(self, module_op, target) -> None:
        """fp32 ops get the GPU set of their family (the GPU uKernels are fp32 only)."""
        for op in list(walk(module_op)):
            kind = classify(op)
            if kind is None or not op.results or kind[1] != "f32" or GPU_ATTR in op.attributes:
                continue
            op.attributes[GPU_ATTR] = gpu_set_to_attr(select_gpu(target, kind[0]))


def retype_operands(op, family: str, convert) -> None:
    """The matmul `op` of family `family` on its A and B converted by `convert` (fp32 into the same C):
    bf16 operands widened to fp32 where no matrix engine serves them (exact), or fp32 ones rounded to
    bf16 for matmul_precision="bf16"."""
    with ir.InsertionPoint(op), op.location:
        a, b = (convert(v) for v in op.operands[:2])
        product = family_matmul(a, b, op.operands[2], family)
    op.results[0].replace_all_uses_with(product)
    op.operation.erase()


class _RoundedOnce:
    """Each value rounded to bf16 once per block: the query, key and value projections read one layer
    norm's output, rounded once, not three times (a pass over the activations each). Matmuls are
    visited in order, so the first rounding in a block comes before the later readers there."""

    def __init__(self):
        self.done: dict = {}

    def __call__(self, value: ir.Value, block, every_reader: bool = False) -> ir.Value:
        key = (value, block)
        if key not in self.done:
            self.done[key] = _rounded_to_bf16(value, lambda whole: self(whole, block, every_reader=True), every_reader)
        return self.done[key]


def _widened_to_f32(value: ir.Value) -> ir.Value:
    """A bf16 operand as fp32 (exact): a constant (a frozen weight) here, once, so that ftuner-tile sees a
    constant and packs it at compile time (a widening generic is folded only later, after the tile pass
    had made the dispatch pack it on every call); the others on every call."""
    array = constant_array(value)
    if array is None:
        return widen(value, ir.F32Type.get())
    return blob_constant(array.astype(np.float32), "f32_weight", ir.F32Type.get())


def _rounded_to_bf16(value: ir.Value, round_whole, every_reader: bool) -> ir.Value:
    """`value` rounded to bf16, to nearest even: a constant (a weight) once, here, the others on every call,
    where they are made (lowering/dispatch/early_rounding.py; `round_whole` rounds what they slice)."""
    array = constant_array(value)
    if array is None:
        return rounded_at_source(value, round_whole, every_reader)
    return blob_constant(array.astype(ml_dtypes.bfloat16), "bf16_weight", ir.BF16Type.get())


def read_transposed_operands(op) -> None:
    """`linalg.matmul(A, linalg.transpose(W))` (torch-mlir's `x @ w.t()`, every Linear layer) becomes
    the transpose_b family member reading W as N x K: the transpose, a copy of the weight on every call,
    disappears (erased when nothing else reads it)."""
    kind = classify(op)
    if kind is None or kind[0] != "matmul" or not op.results:
        return
    producer = defining_op(op.operands[1])
    if producer is None or producer.name != "linalg.transpose" \
            or list(producer.attributes["permutation"]) != [1, 0]:
        return
    with ir.InsertionPoint(op), op.location:
        product = family_matmul(op.operands[0], producer.operands[0], op.operands[2], "matmul_transpose_b")
    op.results[0].replace_all_uses_with(product)
    op.operation.erase()
    if not list(producer.results[0].uses):
        producer.erase()
