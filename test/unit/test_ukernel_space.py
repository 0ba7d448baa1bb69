import itertools

import pytest

from ftuner_mlir.hardware.cpu import PRESETS
from ftuner_mlir.families import FAMILIES
from ftuner_mlir.ukernel import UKernelSet, block_shape, candidates, cover, select, strips

AVX512, AVX2 = PRESETS["x86-avx512"], PRESETS["x86-avx2"]


SPR, ZEN4, ZEN5 = PRESETS["intel-spr"], PRESETS["amd-zen4"], PRESETS["amd-zen5"]


def test_candidates_are_aligned_and_filtered():
    for target in (AVX512, AVX2, SPR, ZEN4):
        lanes = target.lanes(32)
        for c in candidates(target):
            assert c.tile.nr % lanes == 0 and (c.tile.nr // lanes) in (1, 2, 4)
            mr = c.tile.mr // 3 if c.tile.mr % 3 == 0 else c.tile.mr
            assert mr & (mr - 1) == 0 and c.tile.mr <= 16      # a power of two or three times one
            too_many_vectors = c.registers > target.vector_registers
            too_many_rows = c.tile.mr + 6 > target.gp_registers
            assert c.feasible == (not too_many_vectors and not too_many_rows)
            if too_many_vectors:
                assert "vector registers" in c.rejected
            elif too_many_rows:
                assert "general-purpose registers" in c.rejected


def _by_tile(target):
    return {(c.tile.mr, c.tile.nr): c for c in candidates(target)}


def test_port_model_by_hand_intel_sapphire_rapids():
    # 2 FMA ports, 2 load ports, FMA latency 4 (8 accumulators hide it), 32 zmm, 16 GPRs, L1d 48 KiB.
    c = _by_tile(SPR)
    # 16x16: 16 FMAs = 8 cycles, but 1 B vector + 16 broadcasts = 17 loads = 8.5 cycles: load-bound
    # (8/8.5 = 0.94); and 16 rows of A in place need 16 + 6 GPRs of 16: rejected.
    assert c[(16, 16)].efficiency == pytest.approx(8 / 8.5)
    assert "needs 22 general-purpose registers" in c[(16, 16)].rejected
    # 8x32: 16 FMAs = 8 cycles, 2 + 8 loads = 5 cycles: FMA-bound; 16 accumulators >= 8: efficiency 1.
    assert c[(8, 32)].efficiency == 1.0 and c[(8, 32)].feasible and c[(8, 32)].registers == 16 + 2 + 1
    # 8x16: 8 FMAs = 4 cycles vs (1 + 8) / 2 = 4.5 cycles of loads: 0.89.
    assert c[(8, 16)].efficiency == pytest.approx(4 / 4.5)
    # 4x16: 4 FMAs = 2 cycles vs 5 loads = 2.5 cycles (0.8), and 4 accumulators cover half of the
    # 4-cycle latency on 2 ports (4/8): 0.4.
    assert c[(4, 16)].efficiency == pytest.approx(0.8 * 0.5)
    # 8x64: 32 + 4 + 1 = 37 vector registers > 32.
    assert "needs 37 vector registers" in c[(8, 64)].rejected
    # 8x32, 4x64 and 4x32 all reach 1.0; 8x32 has the highest intensity (2*8*32/40 = 12.8).
    u = select(SPR, "matmul_transpose_b")
    assert (u.mr, u.nr) == (8, 32)
    assert u.kc == 256                       # A strip in L1/6: 48 KiB / 6 / (8 * 4 B) = 256
    assert (u.mc, u.nc) == (512, 512)        # 2 MiB / 4 / (256 * 4 B) = 512
    assert u.chains == 8                     # 2 FMA ports x latency 4: a masked tail of < 8 rows splits K


def test_port_model_by_hand_amd_zen4():
    # Zen 4 runs 512-bit FMAs on two 256-bit pipes: 1 FMA port at full width, 2 load ports.
    c = _by_tile(ZEN4)
    # 16x16: 16 FMAs = 16 cycles, 17 loads = 8.5 cycles: FMA-bound (this is why 16x16 and 8x32 measured
    # the same on an EPYC: 169.9 vs 169.7 GFLOP/s), but still 22 GPRs: rejected.
    assert c[(16, 16)].efficiency == 1.0 and not c[(16, 16)].feasible
    # 8x16: 8 FMAs = 8 cycles vs 4.5 for loads; 8 accumulators = 4 cycles x 1 port x 2: efficiency 1.
    assert c[(8, 16)].efficiency == 1.0
    # 4x16: 4 accumulators for latency 4 x 1 port: 1.0 as well, but intensity 6.4.
    assert c[(4, 16)].efficiency == 1.0
    u = select(ZEN4, "matmul")
    assert (u.mr, u.nr) == (8, 32)           # intensity 12.8 beats 8x16's 10.7
    assert u.kc == 128                       # 32 KiB / 6 / (8 * 4 B) = 170 -> 128
    assert (u.mc, u.nc) == (512, 512)        # 1 MiB / 4 / (128 * 4 B) = 512
    assert u.chains == 4                     # 1 port x latency 4


def test_port_model_by_hand_amd_zen5():
    # Zen 5 has full-width 512-bit units: 2 FMA ports, 2 load ports, latency 4, like Intel's; L1d 48 KiB,
    # L2 1 MiB (Sapphire Rapids: 2 MiB).
    c = _by_tile(ZEN5)
    # 8x16: 8 FMAs = 4 cycles vs (1 + 8) / 2 = 4.5 cycles of loads: load-bound, 0.89 (1.0 on Zen 4).
    assert c[(8, 16)].efficiency == pytest.approx(4 / 4.5)
    # 4x16: 2 cycles of FMAs vs 2.5 of loads (0.8), 4 accumulators hide half of latency 4 x 2 ports: 0.4.
    assert c[(4, 16)].efficiency == pytest.approx(0.8 * 0.5)
    assert c[(8, 32)].efficiency == 1.0 and c[(8, 32)].feasible
    u = select(ZEN5, "matmul")
    assert (u.mr, u.nr) == (8, 32)
    assert u.kc == 256                       # 48 KiB / 6 / (8 * 4 B) = 256
    assert (u.mc, u.nc) == (256, 256)        # 1 MiB / 4 / (256 * 4 B) = 256
    assert u.chains == 8                     # 2 ports x latency 4


def test_port_model_by_hand_avx2():
    # 16 ymm registers, 8 lanes: 8x16 needs 16 + 2 + 1 = 19 registers; 4x16 = 8 + 2 + 1 = 11: FMAs
    # 8 / 2 = 4 cycles, loads (2 + 4) / 2 = 3, 8 accumulators = 4 x 2: efficiency 1, intensity 6.4;
    # 8x8 is load-bound: 4 cycles of FMAs, 4.5 of loads. 6x16 (BLIS's Haswell tile) = 12 + 2 + 1 = 15
    # registers: 6 cycles of FMAs, 4 of loads, 12 accumulators: efficiency 1 at intensity 192/22 = 8.7,
    # chosen (measured on a Zen 3 EPYC, one thread, 2048 x 768 x 3072: 71 vs 58 GFLOP/s for 4x16).
    c = _by_tile(AVX2)
    assert "needs 19 vector registers" in c[(8, 16)].rejected
    assert c[(8, 8)].efficiency == pytest.approx(4 / 4.5)
    assert c[(4, 16)].efficiency == 1.0 and c[(4, 16)].intensity == pytest.approx(6.4)
    assert c[(6, 16)].efficiency == 1.0 and c[(6, 16)].registers == 15 and c[(6, 16)].feasible
    assert "needs 18 general-purpose registers" in c[(12, 8)].rejected
    u = select(AVX2, "matmul")
    # kc: 32 KiB / 6 / (6 * 4 B) = 227 -> 128; blocks: 512 KiB / 4 / (128 * 4 B) = 256 -> mc 252 (6 | mc), nc 256
    assert (u.mr, u.nr, u.kc, u.mc, u.nc) == (6, 16, 128, 252, 256)
    assert u.row_sizes == (6, 4, 2, 1)


def test_host_detection_reads_the_vendor_and_family(tmp_path):
    from ftuner_mlir.hardware.cpu import detect_host
    # Zen 4 (family 25) runs a 512-bit FMA per cycle, Zen 5 (family 26) two; Intel two; a family line
    # that is missing or garbled reads as the older AMD core
    for vendor, family, ports in (("GenuineIntel", "6", 2), ("AuthenticAMD", "25", 1), ("AuthenticAMD", "26", 2),
                                  ("AuthenticAMD", None, 1), ("AuthenticAMD", "x", 1)):
        info = tmp_path / f"cpuinfo-{vendor}-{family}"
        family_line = f"cpu family\t: {family}\n" if family else ""
        info.write_text(f"vendor_id\t: {vendor}\n{family_line}flags\t\t: sse avx2 fma avx512f avx512vl\n")
        assert detect_host(str(info), str(tmp_path / "no-cache")).fma_ports == ports, (vendor, family)


def test_selection_is_deterministic_and_per_family():
    for family in FAMILIES:
        assert select(AVX512, family) == select(AVX512, family)
        assert select(AVX512, family).family == family


def test_remainder_sizes():
    u = select(AVX512, "matmul")
    assert u.row_sizes == (8, 4, 2, 1)
    assert u.col_sizes == (32,) and u.tail_width == 32       # whole 32-wide strips, then a masked tail of < 32
    assert u.masked_widths == (16, 32)                       # one masked vector, or one full and one masked
    assert len(u.ukernels()) == 4 and u.ukernels()[0] == (8, 32)         # 8, 4, 2, 1 rows x 32


@pytest.mark.parametrize("extent", list(range(0, 70)) + [127, 128, 129, 1000, 2047])
def test_strips_cover_exactly(extent):
    for sizes in ((16, 8, 4, 2, 1), (12, 8, 4, 2, 1), (8, 4, 2, 1), (6, 4, 2, 1), (3, 2, 1), (1,)):
        parts = strips(extent, sizes)
        assert sum(s * n for s, n in parts) == extent
        assert all(n <= 1 for s, n in parts[1:])         # at most one strip of each remainder size


@pytest.mark.parametrize("extent", list(range(0, 70)) + [127, 128, 129, 1000, 2047])
def test_strips_with_a_masked_tail_cover_exactly(extent):
    parts = strips(extent, (32, 16), tail=16)
    assert sum(s * n for s, n in parts) == extent
    assert [s for s, n in parts[1:] if n] == [s for s in (16,) if extent % 32 & s] + \
        ([extent % 16] if extent % 16 else [])            # at most one 16-wide strip, then the tail


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
    assert mc == 16 and nc % 32 == 0
    c = cover(u, 1, 16, 2304, 768)
    assert c.blocks % u.cores == 0 and c.blocks_per_core(u.cores)[1] == 1.0
    mc, nc = block_shape(u, 192, 5, 5)            # many batches: one block each is enough
    assert (mc, nc) == (8, 32)


def test_block_shape_gives_each_core_several_tasks():
    """BERT's linear layers (M = 2048, 2 cores, mc = nc = 512): 4 row blocks, and column blocks until
    there are 4 tasks a core, each at least 4 register tiles (128 columns) wide."""
    u = select(AVX512, "matmul_transpose_b")
    assert (u.mc, u.nc, u.cores) == (512, 512, 2)
    assert block_shape(u, 1, 2048, 768) == (512, 384)        # 4 x 2 = 8 tasks
    assert cover(u, 1, 2048, 768, 768).blocks == 8
    assert block_shape(u, 1, 80, 768) == (80, 128)           # T = 5: 6 tasks of 4 strips (not 8 of 96)
    assert block_shape(u, 1, 16, 100) == (16, 64)            # few columns: the two cores still get one each


def test_few_columns_split_rows_over_the_cores():
    """A conv GEMM (F=256 rows, OH*OW=196 columns, 2 cores, 8x32 tiles): two column blocks would be 128
    and 68 columns wide; two row blocks of 128 rows are even. With many columns the rows stay whole (a
    row split would make both tasks read all of B) and with B to pack (transpose_b) the columns split."""
    u = select(AVX512, "matmul")
    assert u.cores == 2 and (u.mr, u.nr) == (8, 32)
    assert block_shape(u, 1, 256, 196) == (128, 224)
    assert cover(u, 1, 256, 196, 2304).blocks == 2
    assert block_shape(u, 1, 64, 3136) == (64, 416)   # 4 tasks a core: 8 column blocks of 392 -> 416
    assert block_shape(select(AVX512, "matmul_transpose_b"), 1, 256, 196)[0] == 256


def test_set_validation():
    with pytest.raises(ValueError, match="multiple of the register tile"):
        UKernelSet("matmul", "f32", 4, 16, 32, 66, 64, 2)
    with pytest.raises(ValueError, match="unknown op family"):
        UKernelSet("conv", "f32", 4, 16, 32, 64, 64, 2)
    with pytest.raises(ValueError, match="unsupported element type"):
        UKernelSet("matmul", "bf16", 4, 16, 32, 64, 64, 2)
