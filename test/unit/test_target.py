import dataclasses
import json

import pytest

from ftuner_mlir.hardware.cpu import PRESETS, CpuTarget, detect_host, missing_host_features
from ftuner_mlir.hardware.targets import parse_target


def _fake_machine(tmp_path, flags, caches):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {' '.join(flags)}\n")
    cache = tmp_path / "cache"
    for i, (level, kind, size) in enumerate(caches):
        d = cache / f"index{i}"
        d.mkdir(parents=True)
        (d / "level").write_text(f"{level}\n")
        (d / "type").write_text(f"{kind}\n")
        (d / "size").write_text(f"{size}\n")
    return str(cpuinfo), str(cache)


def test_detects_avx512_and_caches(tmp_path):
    info, cache = _fake_machine(tmp_path, ["sse", "avx2", "fma", "avx512f", "avx512vl"],
                                [(1, "Data", "48K"), (1, "Instruction", "32K"), (2, "Unified", "2048K"),
                                 (3, "Unified", "64M")])
    t = detect_host(info, cache)
    assert (t.isa, t.vector_bits, t.vector_registers) == ("avx512", 512, 32)
    assert (t.l1d_bytes, t.l2_bytes, t.l3_bytes) == (48 << 10, 2 << 20, 64 << 20)
    assert t.cores >= 1


def test_detects_avx2_and_falls_back_for_missing_caches(tmp_path):
    info, cache = _fake_machine(tmp_path, ["sse", "avx2", "fma"], [])
    t = detect_host(info, cache)
    assert (t.isa, t.vector_bits, t.vector_registers) == ("avx2", 256, 16)
    assert t.l2_bytes == PRESETS["x86-avx2"].l2_bytes


@pytest.mark.parametrize("flags, engine", [
    (["avx2", "fma", "avx512f", "avx512vl"], "none"),
    (["avx2", "fma", "avx512f", "avx512vl", "avx512_bf16"], "avx512_bf16"),                 # Zen 4 / 5
    (["avx2", "fma", "avx512f", "avx512vl", "avx512_bf16", "amx_tile", "amx_bf16"], "amx"),  # Sapphire Rapids
    (["avx2", "fma", "avx512f", "avx512vl", "amx_tile"], "none"),                  # tiles without bf16 multiply
    (["avx2", "fma", "avx_vnni"], "none"),                                        # AVX2: no bf16 engine
])
def test_detects_the_bf16_engine(tmp_path, flags, engine):
    info, cache = _fake_machine(tmp_path, flags, [])
    assert detect_host(info, cache).bf16_engine == engine


def test_bf16_engine_is_checked_and_described():
    assert PRESETS["intel-spr"].bf16_engine == "amx" and PRESETS["amd-zen4"].bf16_engine == "avx512_bf16"
    assert "bf16 matrix engine: amx" in PRESETS["intel-spr"].describe()
    with pytest.raises(ValueError, match="unknown bf16_engine 'tpu'"):
        dataclasses.replace(PRESETS["intel-spr"], bf16_engine="tpu")


def test_host_is_deterministic():
    assert detect_host() == detect_host()
    assert hash(detect_host()) == hash(detect_host())


def test_presets_and_lanes():
    t = parse_target("x86-avx2")
    assert t is PRESETS["x86-avx2"]
    assert t.lanes(32) == 8 and t.lanes(64) == 4
    assert "avx2" in t.describe()


def test_json_override(tmp_path):
    path = tmp_path / "box.json"
    path.write_text(json.dumps({"isa": "avx2", "cores": 8, "l2_bytes": 262144}))
    t = parse_target(str(path))
    assert (t.isa, t.vector_bits, t.vector_registers, t.cores, t.l2_bytes) == ("avx2", 256, 16, 8, 262144)
    assert t.name == "box"
    assert CpuTarget(**json.loads(t.to_json())) == t


@pytest.mark.parametrize("content, message", [
    ({"cores": 0}, r"cores = 0 is outside the physical range \[1, 4096\]"),
    ({"vector_bits": 65536}, r"vector_bits = 65536 is outside the physical range"),
    ({"vector_bits": 16}, r"vector_bits = 16 is outside the physical range"),
    ({"isa": "avx2", "vector_bits": 512}, r"vector_bits = 512 does not match isa 'avx2'"),
    ({"cores": "2"}, "cores must be an integer, got '2'"),
    ({"cores": True}, "cores must be an integer, got True"),
    ({"l1d_bytes": 48}, r"l1d_bytes = 48 is outside the physical range"),
    ({"fma_ports": 0}, r"fma_ports = 0 is outside"),
    ({"isa": ["avx2"]}, r"unknown isa \['avx2'\]"),
    ({"name": 7}, "name must be a string"),
    ({"isa": "mmx"}, "unknown isa 'mmx'"),
    ({"frequency": 3}, r"unknown fields \['frequency'\]"),
])
def test_json_errors(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(content))
    with pytest.raises(ValueError, match=message):
        parse_target(str(path))


def test_unknown_target_spec():
    with pytest.raises(ValueError, match="unknown target 'vax'"):
        parse_target("vax")
    with pytest.raises(ValueError, match="cannot read target file"):
        parse_target("/nonexistent/t.json")


# this task's Zen 3 VM (EPYC 7003, AVX2 only), abridged to the flags that matter
ZEN3_FLAGS = ["fpu", "sse", "sse2", "ssse3", "fma", "sse4_1", "sse4_2", "movbe", "popcnt", "avx", "f16c",
              "bmi1", "avx2", "bmi2", "sse4a"]
SPR_EXTRA = ["avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl", "avx512_bf16", "amx_tile", "amx_bf16"]


def test_missing_host_features(tmp_path):
    zen3, _ = _fake_machine(tmp_path, ZEN3_FLAGS, [])
    assert missing_host_features(PRESETS["x86-avx512"], zen3) == \
        ["avx512bw", "avx512cd", "avx512dq", "avx512f", "avx512vl"]
    assert "avx512bw" in missing_host_features(PRESETS["amd-zen4"], zen3)
    assert missing_host_features(PRESETS["x86-avx2"], zen3) == []
    (tmp_path / "spr").mkdir()
    spr, _ = _fake_machine(tmp_path / "spr", ZEN3_FLAGS + SPR_EXTRA, [])
    assert missing_host_features(PRESETS["intel-spr"], spr) == []
    (tmp_path / "icx").mkdir()                    # AVX-512 without AMX (Ice Lake): the AMX preset is refused
    icx, _ = _fake_machine(tmp_path / "icx", ZEN3_FLAGS + SPR_EXTRA[:5], [])
    assert missing_host_features(PRESETS["intel-spr"], icx) == ["amx_bf16", "amx_tile"]
    assert missing_host_features(PRESETS["amd-zen4"], icx) == ["avx512_bf16"]
    old, _ = _fake_machine(tmp_path / "spr", ["sse", "sse2", "avx"], [])        # Sandy Bridge: no AVX2/FMA
    assert "avx2" in missing_host_features(PRESETS["x86-avx2"], old)
    assert missing_host_features(detect_host(), zen3) == []               # "host" code is this machine's
    assert missing_host_features(PRESETS["x86-avx512"], str(tmp_path / "none")) == []   # unreadable: unknown


def test_compile_refuses_a_target_this_machine_cannot_run():
    """On an AVX2 host an AVX-512 preset's code would die of SIGILL: compile says so instead."""
    missing = missing_host_features(PRESETS["x86-avx512"])
    if not missing:
        pytest.skip("this machine runs AVX-512 code: nothing to refuse")
    import ftuner_mlir
    from ftuner_mlir import models
    from ftuner_mlir.errors import InvalidOptions
    with pytest.raises(InvalidOptions, match=r"target 'x86-avx512' \(avx512\) needs CPU features this machine "
                                             r"lacks \(avx512bw.*ftuner export --target x86-avx512"):
        ftuner_mlir.compile(models.matmul(), "x86-avx512", cache=False)
