import os
import subprocess
import tempfile

import numpy as np
import pytest

# Tests never read or write the user's tuning database: they get an empty one of their own.
os.environ["FTUNER_CACHE_DIR"] = tempfile.mkdtemp(prefix="ftuner-test-cache-")


@pytest.fixture
def rng(request):
    """Fresh random inputs every run; the seed is printed so a failure can be replayed (FTUNER_SEED=...)."""
    seed = int(os.environ.get("FTUNER_SEED", int.from_bytes(os.urandom(4), "little")))
    print(f"{request.node.name}: seed {seed}")
    return np.random.default_rng(seed)


@pytest.fixture
def full_folder(tmp_path):
    """A folder on a file system with 8 KiB left: a small tmpfs, filled. Mounting needs root
    (CAP_SYS_ADMIN); where it is refused the test is skipped, saying so."""
    mount = tmp_path / "full"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs to fill ({made.stderr.strip()}): a full disk cannot be made here")
    try:
        with open(mount / "filler", "wb") as f:
            f.write(b"\0" * ((1 << 20) - (8 << 10)))
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)
