"""fp32 -> bf16 rounding as matmul_precision="bf16" emits it (ir/build.narrow_to_bf16: integer ops, since
LLVM's fptrunc to bfloat calls __truncsfbf2), bit for bit against ml_dtypes on the values that decide a
rounding: ties to even either way, the largest finite values (which round to infinity), infinities,
NaNs (quiet, sign kept), subnormals, signed zeros, and fresh random values."""
import ml_dtypes
import numpy as np
from mlir import ir
from mlir.dialects import func

import ftuner_mlir
from ftuner_mlir.ir.build import narrow_to_bf16


def _module() -> str:
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        f32 = ir.RankedTensorType.get([ir.ShapedType.get_dynamic_size()], ir.F32Type.get())
        bf16 = ir.RankedTensorType.get([ir.ShapedType.get_dynamic_size()], ir.BF16Type.get())
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp("narrow", ([f32], [bf16]))
            with ir.InsertionPoint(fn.add_entry_block()):
                func.ReturnOp([narrow_to_bf16(fn.arguments[0])])
        return str(module)


def test_rounding_matches_ml_dtypes_bit_for_bit(rng):
    bits = np.array([0x3F808000, 0x3F818000, 0x3F808001, 0x3F807FFF,     # ties to even (down, up), just above/below
                     0x7F7FFFFF, 0xFF7FFFFF, 0x7F7F8000, 0x7F7F7FFF,     # largest finite: to inf, ties at the top
                     0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001,     # infinities, NaNs
                     0x00000001, 0x80400000, 0x00008000, 0x00000000, 0x80000000], np.uint32)
    x = np.concatenate([bits.view(np.float32), rng.standard_normal(997).astype(np.float32) * 1e3])
    got = ftuner_mlir.compile(_module())(x)
    want = x.astype(ml_dtypes.bfloat16)
    assert got.dtype == ml_dtypes.bfloat16
    nan = np.isnan(want.astype(np.float32))
    assert (np.isnan(got.astype(np.float32)) == nan).all()
    assert (got.view(np.uint16)[~nan] == want.view(np.uint16)[~nan]).all()
    assert (np.signbit(got.astype(np.float32)) == np.signbit(x)).all()
