"""backends/digest.py: the parallel SHA-256 that keys a torch module and seals a cached library."""
import numpy as np

from ftuner_mlir.backends import digest as digest_module
from ftuner_mlir.backends.digest import digest, file_digest


def test_every_byte_and_every_boundary_counts(rng, monkeypatch):
    monkeypatch.setattr(digest_module, "PIECE", 1000)          # many pieces from a small buffer
    data = rng.integers(0, 256, 10_007, dtype=np.uint8).tobytes()
    base = digest([data])
    assert digest([bytearray(data)]) == base
    flipped = bytearray(data)
    flipped[7_777] ^= 1
    assert digest([flipped]) != base
    assert digest([data[:-1]]) != base
    assert digest([data[:5000], data[5000:]]) != base        # a piece boundary too
    assert digest([data[:5001], data[5001:]]) != base
    assert digest([b"", data]) != base and digest([]) != base


def test_a_file_hashes_as_its_bytes(rng, tmp_path, monkeypatch):
    monkeypatch.setattr(digest_module, "PIECE", 4096)
    data = rng.integers(0, 256, 50_001, dtype=np.uint8).tobytes()
    (tmp_path / "lib.so").write_bytes(data)
    (tmp_path / "empty").write_bytes(b"")
    assert file_digest(tmp_path / "lib.so") == digest([data])
    assert file_digest(tmp_path / "empty") == digest([b""])
