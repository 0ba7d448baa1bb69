"""Constant B operands (a model's weights) packed once, at compile time, into the uKernels' micro-panels.

A matmul whose B is a constant (torch-mlir exports every weight as a `dense_resource` constant) would
otherwise transpose or copy its weight into panels on every call. Here the weight, read as N x K
whichever way it is stored, becomes a new constant [ceil(N/nr), K, nr]: panel p holds columns
[p*nr, (p+1)*nr) row after row, the last panel's columns past N are zeros that no uKernel reads. The
dispatch then reads each block's panels in place (codegen/matmul.py, `prepacked`).
"""
from __future__ import annotations

import dataclasses

import numpy as np
from mlir import ir

from ..ir.resources import blob_constant, constant_array
from ..ukernel.space import UKernelSet

PACKED_FAMILY = "matmul_transpose_b"     # the family the dispatch of a packed weight computes


def panels(weight_nk: np.ndarray, nr: int) -> np.ndarray:
    """N x K -> [ceil(N/nr), K, nr], zero-filled past N."""
    n, k = weight_nk.shape
    count = -(-n // nr)
    padded = np.zeros((count * nr, k), weight_nk.dtype)
    padded[:n] = weight_nk
    return np.ascontiguousarray(padded.reshape(count, nr, k).transpose(0, 2, 1))


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
        value = blob_constant(panels(weight_nk, uks.nr), f"ftuner_panels_n{uks.nr}", element_type)
    return value, dataclasses.replace(uks, family=PACKED_FAMILY)
