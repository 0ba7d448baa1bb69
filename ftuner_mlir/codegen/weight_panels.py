"""Constant B operands (a model's weights) packed once, at compile time, into the uKernels' micro-panels.

A matmul whose B is a constant (torch-mlir exports every weight as a `dense_resource` constant) would
otherwise transpose or copy its weight into panels on every call. Here the weight, read as N x K
whichever way it is stored, becomes a new constant [ceil(N/nr), K, nr]: panel p holds columns
[p*nr, (p+1)*nr) row after row, the last panel's columns past N are zeros that no uKernel reads. The
dispatch then reads each block's panels in place (codegen/matmul.py, `prepacked`). In a build the panels
are written straight into the file of the library's constants (ir/arena.py).
"""
from __future__ import annotations

import dataclasses

import numpy as np
from mlir import ir

from ..ir import arena, weights
from ..ir.resources import blob_constant, constant_array
from ..ukernel.space import UKernelSet

PACKED_FAMILY = "matmul_transpose_b"     # the family the dispatch of a packed weight computes


def panels(weight_nk: np.ndarray, nr: int) -> np.ndarray:
    """N x K -> [ceil(N/nr), K, nr], zero-filled past N."""
    n, k = weight_nk.shape
    count, full = -(-n // nr), n // nr
    out = arena.empty((count, k, nr), weight_nk.dtype)    # written once: no padded copy to transpose
    out[:full] = weight_nk[:full * nr].reshape(full, nr, k).transpose(0, 2, 1)
    if full < count:
        out[full] = 0
        out[full, :, :n - full * nr] = weight_nk[full * nr:].T
    return out


def vnni_panels(weight_nk: np.ndarray, width: int = 16, k_step: int = 32) -> np.ndarray:
    """N x K (bf16) -> the AMX dispatch's VNNI panels for the whole weight, [ceil(N/width) * half, 2 *
    width] with half = K rounded up to k_step, over 2: panel p's row kp holds K rows 2kp and 2kp + 1 of
    columns p*width.. interleaved (B[2kp + e, p*width + c] at [p*half + kp, 2c + e]); zeros past N and K.
    A task's panels are then the contiguous rows from (its first column / width) * half on
    (codegen/bf16_matmul.py, `prepacked`)."""
    n, k = weight_nk.shape
    count, half = -(-n // width), -(-k // k_step) * k_step // 2
    padded = np.zeros((2 * half, count * width), weight_nk.dtype)
    padded[:k, :n] = weight_nk.T
    return np.ascontiguousarray(padded.reshape(half, 2, count, width).transpose(2, 0, 3, 1)
                                .reshape(count * half, 2 * width))


def amx_packed_weight(op, transpose_b: bool) -> tuple[ir.Value, int] | None:
    """For a 2-D bf16 matmul (on AMX) whose B is a readable constant: its VNNI panels as a constant
    (inserted before `op`) and the panel height `half`; else None (B is packed per call)."""
    weight = constant_array(op.operands[1])
    if weight is None or weight.ndim != 2:
        return None
    weight_nk = weight if transpose_b else weight.T
    element_type = ir.ShapedType(op.operands[1].type).element_type
    with ir.InsertionPoint(op), op.location:
        value = blob_constant(vnni_panels(weight_nk), "ftuner_vnni_panels", element_type)
    weights.release(weight)
    return value, -(-weight_nk.shape[1] // 32) * 16


def packable(uks: UKernelSet) -> bool:
    """Sets whose B a compile-time pack serves: the plain matmul, B stored K x N or N x K."""
    return not uks.batched


def packed_weight(op, uks: UKernelSet) -> tuple[ir.Value, UKernelSet] | None:
    """For a matmul whose B is a readable constant: the panels constant (inserted before `op`) and the
    uKernel set of its dispatch; else None (B is then packed or read in place per call, as before)."""
    if not packable(uks):
        return None
    weight = constant_array(op.operands[1])
    if weight is None:
        return None
    weight_nk = weight if uks.transpose_b else weight.T
    element_type = ir.ShapedType(op.operands[1].type).element_type
    with ir.InsertionPoint(op), op.location:
        packed = panels(weight_nk, uks.nr)
        value = blob_constant(packed, f"ftuner_panels_n{uks.nr}", element_type)
    arena.release(packed)
    weights.release(weight)
    return value, dataclasses.replace(uks, family=PACKED_FAMILY)
