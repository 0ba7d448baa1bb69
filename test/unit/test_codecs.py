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


def test_head_views_round_trip_and_bad_values():
    """The AMX batch dispatch's head views (ftuner.amx_head_views): written by read-heads-in-place, read
    back on buffers by build-amx-bodies."""
    from ftuner_mlir.families.matmul import HeadViews
    from ftuner_mlir.ir.codecs import head_views_from_attr, head_views_to_attr
    with ir.Context():
        for views in (HeadViews((0, 2, 1, 3), (0, 2, 3, 1)), HeadViews(b=(0, 2, 1, 3)), HeadViews()):
            assert head_views_from_attr(head_views_to_attr(views)) == views
        with pytest.raises(ValueError, match="field 'a' must be an array<i64>"):
            head_views_from_attr(ir.Attribute.parse('{a = 3 : i64}'))
        with pytest.raises(ValueError, match=r"head view of B \(0, 1, 2\) is not a permutation of 4 dims"):
            head_views_from_attr(ir.Attribute.parse('{b = array<i64: 0, 1, 2>}'))


def test_views_amx_reads_keep_a_matrix_row_in_the_last_dim():
    from ftuner_mlir.families.matmul import HeadViews
    views = HeadViews(a=(0, 2, 1, 3), b=(0, 2, 3, 1), c=(0, 2, 1, 3))
    assert views.with_rows_in_place() == views
    # A's columns not in the last dim (rows D apart but columns H * D apart): dropped; K^T stored with
    # its K in dim 2: dropped
    assert HeadViews(a=(0, 3, 1, 2), b=(0, 3, 2, 1)).with_rows_in_place() == HeadViews()
