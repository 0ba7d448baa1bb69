"""The AMX hardware model's choices, worked out by hand."""
import pytest

from ftuner_mlir.hardware.cpu import PRESETS
from ftuner_mlir.ukernel.amx_space import AmxSet, Blocking, best_blocking, blockings, block_shape, select_amx


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
        AmxSet(**fields)
    with pytest.raises(ValueError, match="more than 8 tile registers"):
        AmxSet(**dict(fields, mr=48, nr=48, k_chunk=384))
