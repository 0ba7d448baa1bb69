"""Builders for the `x86vector` dialect's ops (MLIR 22 registers the dialect but ships no Python module
for it), at the caller's insertion point and location; convert-vector-to-llvm lowers them with its
`enable-x86vector` option."""
from __future__ import annotations

from mlir import ir


def dot_bf16(acc: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
    """acc[i] + a[2i] b[2i] + a[2i+1] b[2i+1]: 16 fp32 lanes, a and b 32 x bf16 (vdpbf16ps, AVX512-BF16)."""
    return ir.Operation.create("x86vector.avx512.dot", results=[acc.type], operands=[acc, a, b]).results[0]
