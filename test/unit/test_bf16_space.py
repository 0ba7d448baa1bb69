"""The bf16 hardware model's choices (AMX and AVX512-BF16), worked out by hand."""
import dataclasses

import pytest

from ftuner_mlir.hardware.cpu import PRESETS
from ftuner_mlir.hardware.targets import parse_target
from ftuner_mlir.ukernel.bf16_space import (Bf16Set, Blocking, best_blocking, blockings, block_shape, engine_in_use,
                                            select_amx, select_avx512_bf16, select_bf16, transposed_block_shape,
                                            transposed_pays)


def test_blocking_fits_eight_tiles_with_fewest_loads():
    """2x2 C tiles fed by 2 A and 2 B tiles fill the 8 registers: one load per multiply. 3x1 and 1x3 (7
    tiles) load 4/3 per multiply; 2x3 would need 11 registers."""
    assert best_blocking() == Blocking(2, 2)
    rejected = dict((b, why) for b, why in blockings())
    assert rejected[Blocking(2, 3)] == "needs 11 tile registers (C 6, A 2, B 3), AMX has 8"
    assert rejected[Blocking(3, 1)] is None and Blocking(3, 1).loads_per_multiply == pytest.approx(4 / 3)


def test_sapphire_rapids_set():
    """48 KiB L1: the 32-row A chunk in a third of it is 256 bf16 of K; 2 MiB L2: a 1 MiB packed B block."""
    aset = select_amx(PRESETS["intel-spr"], "matmul_transpose_b")
    assert (aset.mr, aset.nr, aset.k_chunk, aset.b_block_bytes, aset.cores) == (32, 32, 256, 1 << 20, 2)
    assert aset.row_sizes == (32, 16, 8, 4, 2, 1)


def test_transposed_product_for_few_rows():
    """C = X.W^T with W packed per call runs as C^T = W.X^T when packing X (m x k) and writing C transposed
    (8 per element) cost less than packing W (n x k): the paper's Dense (768 -> 2304) up to 92 rows
    (1 + 8 x 2304 / 768 = 25 per row against 2304); a 768-row weight of K 3072 up to 256; nothing tiny.
    Only AMX's A.B^T reads B in place as A tiles."""
    assert [transposed_pays(m, 2304, 768) for m in (1, 16, 92, 93, 2048)] == [1, 1, 1, 0, 0]
    assert (transposed_pays(256, 768, 3072), transposed_pays(257, 768, 3072)) == (1, 0)
    assert transposed_pays(1, 1, 1) == 0 and transposed_pays(1, 17, 5) == 0
    spr = PRESETS["intel-spr"]
    assert select_amx(spr, "matmul_transpose_b").transposable
    assert not select_amx(spr, "matmul").transposable and not select_amx(spr, "batch_matmul").transposable
    assert not select_avx512_bf16(PRESETS["amd-zen4"], "matmul_transpose_b").transposable


def test_transposed_product_splits_the_weight_rows():
    """A task of the transposed product takes all of X's few rows (its columns) and an even share of W's
    rows: 2304 rows on 2 cores, 1152 each; 1013 rows: 32 strips, 16 each; one row: one strip."""
    aset = select_amx(PRESETS["intel-spr"], "matmul_transpose_b")
    assert transposed_block_shape(aset, 2304, 80) == (1152, 96)
    assert transposed_block_shape(aset, 1013, 5) == (512, 32)
    assert transposed_block_shape(aset, 1, 1) == (32, 32)


def test_batched_rest_is_one_exact_strip():
    """A batched product configures the tiles per matrix: its rest below 16 rows is one strip of exactly
    that many rows (a call each), not up to four binary digits."""
    aset = select_amx(PRESETS["intel-spr"], "batch_matmul")
    assert aset.row_sizes == (32, 16) + tuple(range(15, 0, -1))


def test_no_amx_no_set():
    with pytest.raises(ValueError, match="has no AMX"):
        select_amx(PRESETS["amd-zen4"], "matmul")


@pytest.mark.parametrize("m, n, k, expected", [
    (2048, 2304, 768, (2048, 576)),   # BERT's QKV at T = 128: B [768 x 672] fits 1 MiB; 4 column blocks
    (2048, 3072, 768, (2048, 512)),   # 5 blocks of 672 would leave a core idle: 6 of 512
    (2048, 768, 3072, (2048, 128)),   # K = 3072: 160 columns fit, 5 blocks -> 6 blocks of 128
    (16, 768, 768, (32, 384)),        # one row strip: the cores split the columns
    (100, 64, 100, (128, 32)),        # two column strips, one per core
    (5, 5, 64, (32, 32)),             # one tile: one task
    (1, 1, 1, (32, 32)),
])
def test_block_shape(m, n, k, expected):
    assert block_shape(select_amx(PRESETS["intel-spr"], "matmul"), m, n, k) == expected


def test_block_shape_spreads_rows_when_columns_run_out():
    """One column strip (N = 20) on 2 cores: the rows are split instead."""
    assert block_shape(select_amx(PRESETS["intel-spr"], "matmul"), 300, 20, 64) == (160, 32)


def test_batches_occupy_cores_first():
    """192 attention heads already give every core work: each task is a whole matrix."""
    aset = select_amx(PRESETS["intel-spr"], "batch_matmul")
    assert block_shape(aset, 128, 128, 64, batch=192) == (128, 128)


@pytest.mark.parametrize("field, value, message", [
    ("mr", 24, "rows a multiple of 16"), ("k_chunk", 100, "K of 32"), ("nr", 0, "must be a positive integer"),
])
def test_set_validation(field, value, message):
    fields = dict(family="matmul", mr=32, nr=32, k_chunk=384, b_block_bytes=1 << 20, cores=2)
    fields[field] = value
    with pytest.raises(ValueError, match=message):
        Bf16Set(**fields)
    with pytest.raises(ValueError, match="more than 8 tile registers"):
        Bf16Set(**dict(fields, mr=48, nr=48, k_chunk=384))


def test_zen4_avx512_bf16_set():
    """Zen 4: vdpbf16ps at 64 flops a cycle beats the fp32 FMAs' 32, so bf16 runs on it. The register block
    is the fp32 model's 8x32 (16 accumulators, 2 B vectors, 1 broadcast: 19 of 32 registers); the 8-row A
    strip in a third of the 32 KiB L1 is 682 bf16 of K, 672 in steps of 32; half of the 1 MiB L2 for B."""
    zen4 = PRESETS["amd-zen4"]
    assert engine_in_use(zen4)[0] == "avx512_bf16"
    bset = select_bf16(zen4, "matmul_transpose_b")
    assert (bset.engine, bset.mr, bset.nr, bset.k_chunk, bset.b_block_bytes) == ("avx512_bf16", 8, 32, 672, 512 << 10)
    assert bset.row_sizes == (8, 4, 2, 1) and bset.row_tiles == 1 and bset.col_tiles == 2


def test_avx512_bf16_batched_rests_are_binary():
    """No tile configuration to pay per strip call: a batched family's rests are binary digits too."""
    bset = select_avx512_bf16(PRESETS["amd-zen5"], "batch_matmul")
    assert bset.row_sizes == (8, 4, 2, 1) and not bset.exact_rests
    assert bset.k_chunk == 1024                          # Zen 5's 48 KiB L1: 16384 bytes / 16 bytes a column


def test_slow_dot_products_widen():
    """Sapphire Rapids' vdpbf16ps does 32 flops a cycle, its fp32 FMAs 64: a target with AVX512-BF16 as
    its engine there runs bf16 matmuls widened to fp32, and says why."""
    spr_dots = parse_target("intel-spr,bf16_engine=avx512_bf16")
    engine, why = engine_in_use(spr_dots)
    assert engine == "none" and "32 flops/cycle here, the fp32 FMAs 64" in why
    with pytest.raises(ValueError, match="widened to fp32"):
        select_bf16(spr_dots, "matmul")
    assert engine_in_use(PRESETS["x86-avx512"])[0] == "none"
    assert engine_in_use(PRESETS["intel-spr"])[0] == "amx"


@pytest.mark.parametrize("spec, message", [
    ("x86-avx2,bf16_engine=avx512_bf16", "needs an avx512 target"),
    ("host,bf16_engine=tpu", "expected bf16_engine=<amx|avx512_bf16|none>"),
    ("host,cores=3", "unknown target option 'cores=3'"),
])
def test_engine_override_is_checked(spec, message):
    with pytest.raises(ValueError, match=message):
        parse_target(spec)


def test_avx512_bf16_set_validation():
    """8 rows x 4 panels: 32 accumulators + 4 B vectors + a broadcast do not fit 32 registers."""
    with pytest.raises(ValueError, match="more than 32 vector registers"):
        Bf16Set("matmul", 8, 64, 672, 1 << 19, 2, engine="avx512_bf16")
    with pytest.raises(ValueError, match="unknown bf16 engine 'sme'"):
        Bf16Set("matmul", 8, 32, 672, 1 << 19, 2, engine="sme")
    assert dataclasses.replace(select_amx(PRESETS["intel-spr"], "matmul")).engine == "amx"
