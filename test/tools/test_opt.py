"""ftuner-opt and ftuner as a user runs them: exit codes, messages, files; never a Python traceback."""
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
DENSE = """
func.func @dense(%x: tensor<?x768xf32>, %w: tensor<2304x768xf32>, %c: tensor<?x2304xf32>) -> tensor<?x2304xf32> {
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<?x768xf32>, tensor<2304x768xf32>) outs(%c : tensor<?x2304xf32>) -> tensor<?x2304xf32>
  return %r : tensor<?x2304xf32>
}
"""


def opt(*args, stdin=None):
    return subprocess.run([str(BIN / "ftuner-opt"), *args], input=stdin, capture_output=True, text=True, timeout=120)


def test_help_and_list():
    r = opt("--help")
    assert r.returncode == 0 and "--pass-pipeline" in r.stdout
    r = opt("--list-passes")
    for flag in ("ftuner-select-ukernels", "ftuner-tile", "ftuner-vectorize-ukernels", "ftuner-lower-cpu",
                 "ftuner-cpu-pipeline", "num-threads"):
        assert flag in r.stdout


def test_stdin_to_output_file(tmp_path):
    out = tmp_path / "o.mlir"
    r = opt("-", "--ftuner-select-ukernels", "-o", str(out), stdin=DENSE)
    assert r.returncode == 0 and r.stdout == ""
    assert 'family = "matmul_transpose_b"' in out.read_text()


def test_identity_without_passes():
    r = opt(stdin=DENSE)
    assert r.returncode == 0 and "linalg.matmul" in r.stdout and "ftuner" not in r.stdout


@pytest.mark.parametrize("args, message", [
    (["--target=z80"], "unknown target 'z80'"),
    (["--no-such-pass"], "'no-such-pass' does not refer to a registered pass"),
    (["--ftuner-lower-cpu=cores=2"], "bad option 'cores=2'"),
    (["/nonexistent.mlir"], "cannot read /nonexistent.mlir"),
    (["-o"], "-o needs a value"),
])
def test_usage_errors(args, message):
    r = opt(*args, stdin=DENSE)
    assert r.returncode == 1
    assert message in r.stderr
    assert "Traceback" not in r.stderr


def test_print_target():
    r = opt("--print-target", "--target=x86-avx2")
    assert r.returncode == 0 and '"isa": "avx2"' in r.stdout


def test_demo_runs_and_checks():
    r = subprocess.run([str(BIN / "ftuner"), "demo", "--t", "1,3", "--min-time", "0.01"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "all results match numpy" in r.stdout
    assert "compilations in this process: 1" in r.stdout
    rows = [line.split() for line in r.stdout.splitlines() if line.split() and line.split()[0] in ("1", "3")]
    assert [row[1] for row in rows] == ["16", "48"]


@pytest.mark.parametrize("target, expected", [("x86-avx512", "matmul f32: body 8x32, row remainders [4, 2, 1]"),
                                              ("cuda:h200", "body block 128x128x8, thread tile 8x8 (256 threads)")])
def test_ftuner_target(target, expected):
    r = subprocess.run([str(BIN / "ftuner"), "target", "--target", target], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and expected in r.stdout, r.stdout + r.stderr
