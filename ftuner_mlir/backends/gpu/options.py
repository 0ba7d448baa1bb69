"""Everything that decides the code a GPU module compiles to, as one frozen value that travels to the
compiler process as JSON (like cpu/options.py)."""
from __future__ import annotations

import dataclasses
import json

from ...errors import InvalidOptions
from ...hardware.gpu import GpuTarget
from ..cpu.options import OPT_LEVELS


@dataclasses.dataclass(frozen=True)
class GpuOptions:
    target: GpuTarget
    opt_level: int = 3            # LLVM's -O level of the host code

    worker = "ftuner_mlir.backends.gpu.worker"           # the compiler process (../isolate.py)

    def __post_init__(self):
        if self.opt_level not in OPT_LEVELS:
            raise InvalidOptions(f"opt_level must be one of {OPT_LEVELS}, got {self.opt_level!r}")

    def stages(self) -> list:
        """The ftuner passes compile() runs, in order: ftuner-gpu-pipeline."""
        from ...passes import GpuPipeline
        return GpuPipeline(target=self.target).stages()

    def pipeline_text(self) -> str:
        return "builtin.module(" + ",".join(stage.pipeline_text() for stage in self.stages()) + ")"

    def target_argument(self, path) -> str:
        return f"cuda:{path}"

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "GpuOptions":
        data = json.loads(text)
        return cls(target=GpuTarget(**data.pop("target")), **data)
