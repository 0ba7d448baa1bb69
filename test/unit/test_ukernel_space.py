import itertools

import pytest

from ftuner_mlir.hardware.cpu import PRESETS
from ftuner_mlir.ukernel import FAMILIES, UKernelSet, block_shape, candidates, cover, select, strips

AVX512, AVX2 = PRESETS["x86-avx512"], PRESETS["x86-avx2"]


def test_candidates_are_aligned_and_filtered():
    for target in (AVX512, AVX2):
        lanes = target.lanes(32)
        for c in candidates(target):
            assert c.tile.nr % lanes == 0 and (c.tile.nr // lanes) in (1, 2, 4)
            assert c.tile.mr & (c.tile.mr - 1) == 0            # a power of two
            assert c.feasible == (c.registers <= target.vector_registers)


def test_selection_by_hand():
    # AVX-512: 16x16 needs 16 accumulators + 1 B vector + 1 broadcast = 18 of 32 registers, intensity 16;
    # 16x32 (35) and 8x64 (37) do not fit; 8x32 fits but has intensity 12.8.
    u = select(AVX512, "matmul")
    assert (u.mr, u.nr) == (16, 16)
    assert u.kc == 128                       # (16+16)*4 B*128 = 16 KiB = half of L1
    assert (u.mc, u.nc) == (512, 512)        # 512*128*4 B = 256 KiB = a quarter of L2
    # AVX2: 8x8 = 8 + 1 + 1 = 10 of 16 registers, intensity 8; 8x16 needs 19.
    u = select(AVX2, "matmul")
    assert (u.mr, u.nr, u.kc, u.mc, u.nc) == (8, 8, 256, 128, 128)


def test_selection_is_deterministic_and_per_family():
    for family in FAMILIES:
        assert select(AVX512, family) == select(AVX512, family)
        assert select(AVX512, family).family == family


def test_remainder_sizes():
    u = select(AVX512, "matmul")
    assert u.row_sizes == (16, 8, 4, 2, 1)
    assert u.col_sizes == (16, 8, 4, 2, 1)
    assert len(u.ukernels()) == 25 and u.ukernels()[0] == (16, 16)


@pytest.mark.parametrize("extent", list(range(0, 70)) + [127, 128, 129, 1000, 2047])
def test_strips_cover_exactly(extent):
    for sizes in ((16, 8, 4, 2, 1), (8, 4, 2, 1), (1,)):
        parts = strips(extent, sizes)
        assert sum(s * n for s, n in parts) == extent
        assert all(n <= 1 for s, n in parts[1:])         # at most one strip of each remainder size


def test_cover_has_no_padding_and_counts_tiles():
    u = select(AVX512, "matmul")
    for batch, m, n, k in itertools.product((1, 3), (1, 15, 37, 512, 1000), (1, 17, 129, 2304), (1, 65)):
        c = cover(u, batch, m, n, k)
        assert c.useful_flops == 2 * batch * m * n * k
        assert c.executed_flops == c.useful_flops and c.padded_fraction == 0.0
        assert sum(r * col * cnt for (r, col), cnt in c.tiles.items()) == batch * m * n


def test_block_shape_occupies_the_cores():
    u = select(AVX512, "matmul_transpose_b")
    mc, nc = block_shape(u, 1, 16, 2304)          # the Dense layer at T = 1
    assert mc == 16 and nc % 16 == 0
    c = cover(u, 1, 16, 2304, 768)
    assert c.blocks % u.cores == 0 and c.blocks_per_core(u.cores)[1] == 1.0
    mc, nc = block_shape(u, 192, 5, 5)            # many batches: one block each is enough
    assert (mc, nc) == (16, 16)


def test_set_validation():
    with pytest.raises(ValueError, match="multiple of the register tile"):
        UKernelSet("matmul", "f32", 4, 16, 32, 66, 64, 2)
    with pytest.raises(ValueError, match="unknown op family"):
        UKernelSet("conv", "f32", 4, 16, 32, 64, 64, 2)
    with pytest.raises(ValueError, match="unsupported element type"):
        UKernelSet("matmul", "bf16", 4, 16, 32, 64, 64, 2)
