import json

import pytest

from ftuner_mlir.hardware.gpu import GPU_PRESETS, parse_gpu_target
from ftuner_mlir.hardware.targets import parse_target
from ftuner_mlir.ukernel.gpu_space import GpuTile, candidates, cover_gpu, select_gpu

V100, H200 = GPU_PRESETS["v100"], GPU_PRESETS["h200"]


def test_presets_and_parsing(tmp_path):
    assert parse_target("cuda:h200") is H200
    assert parse_gpu_target("cuda:sm_80") is GPU_PRESETS["a100"]
    assert (H200.chip, H200.ptx_features, H200.sms) == ("sm_90", "+ptx80", 132)
    assert (V100.chip, V100.ptx_features, V100.sms) == ("sm_70", "+ptx60", 80)
    path = tmp_path / "small.json"
    path.write_text(json.dumps({"chip": "sm_80", "sms": 16}))
    t = parse_gpu_target(f"cuda:{path}")
    assert (t.name, t.sms, t.shared_bytes_per_block) == ("small", 16, GPU_PRESETS["a100"].shared_bytes_per_block)
    with pytest.raises(ValueError, match="unknown GPU target 'cuda:tpu'"):
        parse_gpu_target("cuda:tpu")


@pytest.mark.parametrize("target", [V100, H200], ids=["v100", "h200"])
def test_selection_by_hand(target):
    # Intensity peaks at 128x128 (32 flop/byte). Among its thread tiles, 8x8 gives 256 threads with
    # 64 + 8 + 8 + 28 = 108 registers: 65536 / (108 * 256) = 2 blocks per SM; 4x8 and 4x4 fit one.
    # Ties on bk go to the least shared memory: bk = 8 (8 KiB).
    u = select_gpu(target, "matmul")
    assert u.body == GpuTile(128, 128, 8, 8, 8)
    assert (u.body.threads, u.body.registers, u.body.blocks_per_sm(target)) == (256, 108, 2)
    # Edge: the smallest block, 32x32, needs 2x2 thread tiles for 256 threads (4x4 gives 64, not a
    # multiple of 32 x 4).
    assert u.edge == GpuTile(32, 32, 8, 2, 2)


def test_filters():
    assert "threads" in GpuTile(128, 128, 8, 2, 2).rejection(H200)          # 4096 threads
    assert "transaction" in GpuTile(32, 36, 8, 2, 2).rejection(H200)       # bn not a multiple of 8
    assert "316 registers per thread > 255" in GpuTile(128, 256, 8, 16, 16).rejection(H200)   # 128 threads
    assert "shared memory" in GpuTile(128, 128, 32, 8, 8).rejection(parse_gpu_target("cuda:v100").__class__(
        **{**H200.__dict__, "shared_bytes_per_block": 16 << 10}))
    tiny = parse_gpu_target("cuda:h200")
    assert all(t.threads % 128 == 0 for t, why in candidates(tiny) if why is None)
    assert all(t.shared_bytes <= tiny.shared_bytes_per_block for t, why in candidates(tiny) if why is None)


def test_cover_by_hand():
    # Dense at T = 77: M = 1232 = 9 full 128-row tiles + 80 rows; N = 2304 = 18 tiles exactly.
    u = select_gpu(H200, "matmul_transpose_b")
    c = cover_gpu(u, H200, 1, 1232, 2304, 768)
    assert (c.body_blocks, c.edge_blocks) == (162, 3 * 72)
    assert abs(c.wave_efficiency - 162 / 264) < 1e-12                        # 132 SMs x 2 blocks
    assert abs(c.padded_fraction - ((162 * 128 * 128 + 216 * 32 * 32) / (1232 * 2304) - 1)) < 1e-12
    assert c.padded_fraction < 0.02
