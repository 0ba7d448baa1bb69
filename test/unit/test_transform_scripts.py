"""The transform scripts are real MLIR: each parses, and run_script sets exactly the parameters a
script marks."""
import pytest
from mlir import ir

from ftuner_mlir.lowering.transform import SCRIPTS, run_script, script_text


@pytest.mark.parametrize("name", sorted(p.stem for p in SCRIPTS.glob("*.mlir")))
def test_each_script_parses(name):
    with ir.Context() as context:
        context.allow_unregistered_dialects = False
        module = ir.Module.parse(script_text(name))
        assert module.operation.verify()


def test_parameters_are_checked():
    with ir.Context():
        payload = ir.Module.parse("module {}")
        with pytest.raises(ValueError, match=r"takes parameters \['lanes'\], given \[\]"):
            run_script("vectorize_epilogues", payload.operation)
        with pytest.raises(ValueError, match=r"takes parameters \[\], given \['lanes'\]"):
            run_script("vectorize_ukernels", payload.operation, lanes=8)
        run_script("vectorize_epilogues", payload.operation, lanes=8)      # nothing to match: no change
        assert str(payload).strip() == "module {\n}"
