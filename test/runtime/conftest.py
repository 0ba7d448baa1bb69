import subprocess
from pathlib import Path

import pytest

INPUTS = Path(__file__).parent / "Inputs"


@pytest.fixture(scope="session")
def fake_driver(tmp_path_factory):
    """A folder with a stand-in libcuda.so.1 that records kernel launches instead of running them."""
    d = tmp_path_factory.mktemp("fakecuda")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(d / "libcuda.so.1"), str(INPUTS / "fake_libcuda.c")],
                   check=True)
    return d

