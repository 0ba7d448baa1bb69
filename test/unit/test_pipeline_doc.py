"""The CPU pipeline is written once, as phases of registered passes, and docs/pipeline.md says so."""
from pathlib import Path

from ftuner_mlir.hardware.cpu import PRESETS
from ftuner_mlir.passes import REGISTRY
from ftuner_mlir.passes.base import Upstream
from ftuner_mlir.passes.lower_cpu import LowerCpu
from ftuner_mlir.tools.pipeline_doc import DOC_TARGET, describe

ROOT = Path(__file__).resolve().parents[2]


def test_docs_pipeline_is_current():
    """Regenerate with: ftuner-opt --target=intel-spr --list-phases > docs/pipeline.md"""
    assert (ROOT / "docs" / "pipeline.md").read_text() == describe(PRESETS[DOC_TARGET])


def test_every_step_is_a_registered_pass_or_upstream():
    for target in PRESETS.values():
        for threads in (1, 2):
            for profile in (False, True):
                entries = LowerCpu(target=target, num_threads=threads, profile=profile).passes()
                for entry in entries:
                    assert isinstance(entry, Upstream) or REGISTRY.get(entry.name) is type(entry), entry
                names = [e.name for e in entries if not isinstance(e, Upstream)]
                assert len(names) == len(set(names)), "a pass runs twice"
                assert ("ftuner-profile-ops" in names) == profile
