"""The on-disk cache of compiled modules: a second process loads instead of compiling, entries are
validated before they are loaded, concurrent builds of one module agree, and the cache can be
switched off, listed and cleared. Each scenario runs in fresh processes sharing one cache folder."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ftuner_mlir.backends.worker import write_manifest

BIN = Path(sys.executable).parent

# Compile a module (its text varies with TAG, so every test has its own cache key), check it against
# float64 numpy on fresh random inputs, print where the code came from.
SCRIPT = """
import json, sys, numpy as np
import ftuner_mlir
from ftuner_mlir import compiler, models
exe = ftuner_mlir.compile(models.matmul() + "\\n// {tag}\\n"{kwargs})
rng = np.random.default_rng()
worst = 0.0
for m, n, k in ((1, 1, 1), (37, 65, 129), (16, 31, 7)):
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    out = np.full((m, n), np.nan, np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    worst = max(worst, float(np.abs(exe(a, b, out=out) - ref).max() / max(1.0, np.abs(ref).max())))
print(json.dumps({{"origin": exe.origin, "library": exe.library, "compilations": compiler.compilations,
                  "cache_loads": compiler.cache_loads, "err": worst}}))
"""


# A module with a weight (the same in every process, from a seeded generator) large enough to live in
# the constants file beside the library (backends/cpu/constants.py).
WEIGHTED_SCRIPT = """
import json, numpy as np
import ftuner_mlir
from ftuner_mlir import compiler, models
from ftuner_mlir.freeze import freeze_arguments
w = np.random.default_rng(7).standard_normal((80, 48)).astype(np.float32)
exe = ftuner_mlir.compile("// {tag}\\n" + freeze_arguments(models.matmul(n=48, k=80), {{1: w}}){kwargs})
rng = np.random.default_rng()
worst = 0.0
for m in (1, 29):
    a = rng.standard_normal((m, 80)).astype(np.float32)
    ref = a.astype(np.float64) @ w.astype(np.float64)
    out = np.full((m, 48), np.nan, np.float32)
    worst = max(worst, float(np.abs(exe(a, out=out) - ref).max() / np.abs(ref).max()))
print(json.dumps({{"origin": exe.origin, "library": exe.library, "compilations": compiler.compilations,
                  "err": worst}}))
"""


def run(cache_dir: Path, tag: str, kwargs: str = "", env: dict | None = None, wait: bool = True,
        script: str = SCRIPT):
    environment = dict(os.environ, FTUNER_CACHE_DIR=str(cache_dir), **(env or {}))
    proc = subprocess.Popen([sys.executable, "-c", script.format(tag=tag, kwargs=kwargs)], env=environment,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return finish(proc) if wait else proc


def finish(proc) -> dict:
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    result = json.loads(out.splitlines()[-1])
    assert result["err"] < 1e-5, result
    return result


def entries(cache_dir: Path) -> list[Path]:
    return sorted((cache_dir / "modules").glob("??/*/module.json"))


def test_second_process_loads_from_cache(tmp_path):
    first = run(tmp_path, "second-process")
    assert first["origin"] == "built" and first["compilations"] == 1
    second = run(tmp_path, "second-process")
    assert second["origin"] == "cache" and second["compilations"] == 0 and second["cache_loads"] == 1
    assert second["library"] == first["library"] and len(entries(tmp_path)) == 1


@pytest.mark.parametrize("damage", ["truncate-library", "flip-library-byte", "garbage-manifest", "drop-library",
                                    "edit-result-dims", "edit-result-dtype", "edit-and-reseal"])
def test_a_damaged_entry_is_rebuilt_not_loaded(tmp_path, damage):
    first = run(tmp_path, damage)
    library = Path(first["library"])
    manifest = library.parent / "module.json"
    if damage == "truncate-library":
        library.write_bytes(library.read_bytes()[:1000])
    elif damage == "flip-library-byte":
        data = bytearray(library.read_bytes())
        data[len(data) // 2] ^= 0xFF
        library.write_bytes(bytes(data))
    elif damage == "garbage-manifest":
        manifest.write_text("{ not json")
    elif damage == "edit-and-reseal":           # sealed, but not this library's: its @ftuner_abi table tells
        data = json.loads(manifest.read_text())
        data["functions"]["matmul"]["results"][0]["dtype"] = "float64"
        write_manifest(manifest.parent, data)
    elif damage.startswith("edit-"):            # valid JSON, the library intact: only the seal tells
        data = json.loads(manifest.read_text())
        result = data["functions"]["matmul"]["results"][0]
        if damage == "edit-result-dims":
            data["functions"]["matmul"]["result_dims"][0][0] = data["functions"]["matmul"]["result_dims"][0][1]
        else:
            result["dtype"] = "float64"
        manifest.write_text(json.dumps(data, indent=1))
    else:
        library.unlink()
    again = run(tmp_path, damage)
    assert again["origin"] == "built" and again["compilations"] == 1
    assert run(tmp_path, damage)["origin"] == "cache"


@pytest.mark.parametrize("damage", ["flip-constants-byte", "truncate-constants", "drop-constants"])
def test_damaged_constants_are_rebuilt_not_loaded(tmp_path, damage):
    """The weights file beside the library is sealed like the library: a changed byte is caught before
    the code computes with it."""
    first = run(tmp_path, damage, script=WEIGHTED_SCRIPT)
    folder = Path(first["library"]).parent
    constants = folder / json.loads((folder / "module.json").read_text())["constants"]["file"]
    if damage == "flip-constants-byte":
        data = bytearray(constants.read_bytes())
        data[len(data) // 3] ^= 0x40
        constants.write_bytes(bytes(data))
    elif damage == "truncate-constants":
        constants.write_bytes(constants.read_bytes()[:100])
    else:
        constants.unlink()
    again = run(tmp_path, damage, script=WEIGHTED_SCRIPT)
    assert again["origin"] == "built" and again["compilations"] == 1
    assert run(tmp_path, damage, script=WEIGHTED_SCRIPT)["origin"] == "cache"


def test_concurrent_builds_agree(tmp_path):
    procs = [run(tmp_path, "concurrent", wait=False) for _ in range(3)]
    results = [finish(p) for p in procs]
    assert len(entries(tmp_path)) == 1
    assert {r["library"] for r in results if r["origin"] == "cache"} <= {str(Path(entries(tmp_path)[0]).parent /
                                                                           "libmodule.so")}
    assert not list((tmp_path / "modules").glob("building-*")), "a build folder was left behind"


def test_cache_can_be_switched_off(tmp_path):
    assert run(tmp_path, "off", env={"FTUNER_NO_CACHE": "1"})["origin"] == "built"
    assert run(tmp_path, "off", kwargs=", cache=False")["origin"] == "built"
    assert entries(tmp_path) == []
    assert not list((tmp_path / "modules").glob("building-*"))


def test_options_and_target_are_part_of_the_key(tmp_path):
    run(tmp_path, "key")
    assert run(tmp_path, "key", kwargs=", num_threads=1")["origin"] == "built"
    assert run(tmp_path, "key", kwargs=", target='x86-avx2'")["origin"] == "built"
    assert run(tmp_path, "key", kwargs=", opt_level=2")["origin"] == "built"
    assert len(entries(tmp_path)) == 4


def test_cache_command_lists_and_clears(tmp_path):
    run(tmp_path, "listed")
    env = dict(os.environ, FTUNER_CACHE_DIR=str(tmp_path))
    listing = subprocess.run([str(BIN / "ftuner"), "cache"], env=env, capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0 and "1 compiled modules" in listing.stdout and "@matmul" in listing.stdout
    cleared = subprocess.run([str(BIN / "ftuner"), "cache", "clear"], env=env, capture_output=True, text=True,
                             timeout=60)
    assert cleared.returncode == 0 and "removed 1 compiled modules" in cleared.stdout
    assert entries(tmp_path) == []
