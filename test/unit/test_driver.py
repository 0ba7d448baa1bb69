from pathlib import Path

import pytest

from ftuner_mlir.driver import instantiate, split_top_level
from ftuner_mlir.ir.diagnostics import format_location
from ftuner_mlir.passes import REGISTRY, LowerCpu

ROOT = Path(__file__).resolve().parents[2]


def test_split_top_level():
    assert split_top_level("builtin.module(a,b{x=1 y=2},func.func(c,d))") == ["a", "b{x=1 y=2}", "func.func(c,d)"]
    assert split_top_level(" a , b ") == ["a", "b"]
    with pytest.raises(ValueError, match="unbalanced"):
        split_top_level("a(b")


def test_instantiate_options_roundtrip():
    p = instantiate("ftuner-lower-cpu{num-threads=3}", None)
    assert isinstance(p, LowerCpu) and p.num_threads == 3
    assert p.pipeline_text() == "ftuner-lower-cpu{num-threads=3 profile=False}"
    assert instantiate("canonicalize{max-iterations=2}", None) == "canonicalize{max-iterations=2}"
    with pytest.raises(ValueError, match="bad option 'threads=3'"):
        instantiate("ftuner-lower-cpu{threads=3}", None)
    with pytest.raises(ValueError, match="expects int"):
        instantiate("ftuner-lower-cpu{num-threads=many}", None)


def test_registry_is_honest():
    """Every registered flag is its pass's own name, documented, and has a lit test named after it."""
    for flag, cls in REGISTRY.items():
        assert cls.name == flag and flag.startswith("ftuner-")
        assert cls.summary
        assert (ROOT / "test" / "passes" / f"{flag}.mlir").exists(), f"no lit test for {flag}"
        documented = (ROOT / "README.md").read_text() + (ROOT / "docs" / "pipeline.md").read_text()
        assert flag in documented, f"{flag} missing from the README and docs/pipeline.md"


def test_format_location():
    assert format_location('loc("a.mlir":3:7)') == "a.mlir:3:7"
    assert format_location('loc("-":3:7)', "x.mlir") == "x.mlir:3:7"
    assert format_location("loc(unknown)", "x.mlir") == "x.mlir"


def test_a_pass_without_a_target_says_so():
    """No silent host detection: a pass that needs the target and was built without one refuses."""
    with pytest.raises(ValueError, match="ftuner-lower-cpu needs a target"):
        instantiate("ftuner-lower-cpu", None).passes()


def test_a_bug_in_a_python_step_is_a_located_internal_error():
    """An unexpected exception inside a Python step becomes a diagnostic naming the step, the exception
    and where it was raised; a ValueError (bad options) still reaches the caller as itself."""
    import dataclasses

    from mlir import ir

    from ftuner_mlir import driver
    from ftuner_mlir.passes.base import ModulePass

    @dataclasses.dataclass(frozen=True)
    class Broken(ModulePass):
        name = "broken"
        summary = "fails"
        error: str = "KeyError"

        def apply(self, module_op):
            raise {"KeyError": KeyError, "ValueError": ValueError}[self.error]("missing")

    with ir.Context():
        module = ir.Module.parse("func.func @f() {\n  return\n}")
        with pytest.raises(ir.MLIRError) as found:
            driver.run_pipeline(module, [Broken()])
        (diagnostic,) = found.value.error_diagnostics
        assert diagnostic.message.startswith("internal error in broken: KeyError: 'missing' (raised at ")
        assert "test_driver.py" in diagnostic.message
        with pytest.raises(ValueError, match="missing"):
            driver.run_pipeline(module, [Broken(error="ValueError")])


@pytest.mark.parametrize("spec, message", [
    ("ftuner-lower-cpu{num-threads=-3}", "option num-threads must be 0..4096, got -3"),
    ("ftuner-lower-cpu{num-threads=4097}", "option num-threads must be 0..4096, got 4097"),
    ("ftuner-lower-cpu{profile=maybe}", "option profile expects bool, got 'maybe'"),
    ("ftuner-select-ukernels{mr=1024 nr=1024}", "option mr must be 0..64, got 1024"),
    ("ftuner-select-ukernels{nr=257}", "option nr must be 0..256, got 257"),
    ("ftuner-lower-gpu{format=foo}", "option format must be one of isa, bin, fatbin, got 'foo'"),
    ("ftuner-lower-gpu{opt-level=4}", "option opt-level must be 0..3, got 4"),
    ("ftuner-gpu-pipeline{format=ptx}", "option format must be one of isa, bin, fatbin, got 'ptx'"),
])
def test_options_are_checked_against_their_declared_ranges(spec, message):
    with pytest.raises(ValueError, match=message):
        instantiate(spec, None)


def test_options_take_their_type_from_the_annotation_and_are_checked_from_python():
    """Not from the default's type: a bool given to an int option, or a str to an int one, is refused
    when the pass is built in Python too; the edges of a range are accepted."""
    assert LowerCpu(num_threads=0).num_threads == 0 and LowerCpu(num_threads=4096).num_threads == 4096
    with pytest.raises(ValueError, match="option num-threads expects int, got True"):
        LowerCpu(num_threads=True)
    with pytest.raises(ValueError, match="option num-threads expects int, got '2'"):
        LowerCpu(num_threads="2")
    with pytest.raises(ValueError, match="option profile expects bool, got 1"):
        LowerCpu(profile=1)


def test_compile_refuses_options_out_of_range_before_compiling():
    import ftuner_mlir
    from ftuner_mlir import models
    from ftuner_mlir.errors import InvalidOptions

    with pytest.raises(InvalidOptions, match="option mr must be 0..64, got 1024"):
        ftuner_mlir.compile(models.matmul(), tile=(1024, 1024))
    with pytest.raises(InvalidOptions, match="option num-threads must be 0..4096, got 5000"):
        ftuner_mlir.compile(models.matmul(), num_threads=5000)
