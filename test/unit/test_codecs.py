"""The uKernel-set attribute codec: what select writes, tile reads back."""
import pytest
from mlir import ir

from ftuner_mlir.hardware.cpu import PRESETS
from ftuner_mlir.ir.codecs import ukernel_set_from_attr, ukernel_set_to_attr
from ftuner_mlir.ukernel.space import UKernelSet, select


@pytest.mark.parametrize("target", ["intel-spr", "amd-zen4", "amd-zen5", "x86-avx2"])
def test_round_trip(target):
    uks = select(PRESETS[target], "batch_matmul")
    with ir.Context():
        assert ukernel_set_from_attr(ukernel_set_to_attr(uks)) == uks


def test_fields_with_defaults_may_be_left_out():
    with ir.Context():
        attr = ir.Attribute.parse('{cores = 2 : i64, dtype = "f32", family = "matmul", kc = 32 : i64, '
                                  'mc = 64 : i64, mr = 4 : i64, nc = 64 : i64, nr = 16 : i64}')
        uks = ukernel_set_from_attr(attr)
        assert (uks.lanes, uks.chains) == (16, 8)
        with pytest.raises(ValueError, match="lacks field 'kc'"):
            ukernel_set_from_attr(ir.Attribute.parse('{cores = 2 : i64, dtype = "f32", family = "matmul", '
                                                     'mc = 64 : i64, mr = 4 : i64, nc = 64 : i64, nr = 16 : i64}'))
        with pytest.raises(ValueError, match="field 'chains' must be an integer"):
            ukernel_set_from_attr(ir.Attribute.parse('{chains = "8", cores = 2 : i64, dtype = "f32", '
                                                     'family = "matmul", kc = 32 : i64, mc = 64 : i64, '
                                                     'mr = 4 : i64, nc = 64 : i64, nr = 16 : i64}'))
        with pytest.raises(ValueError, match="chains must be positive"):
            UKernelSet("matmul", "f32", 4, 16, 32, 64, 64, 2, 16, 0)
