import os
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
