"""Everything that decides the code a CPU module compiles to, as one frozen, hashable value that
travels to the compiler process as JSON."""
from __future__ import annotations

import dataclasses
import json

from ...errors import InvalidOptions
from ...hardware.cpu import CpuTarget

OPT_LEVELS = (0, 1, 2, 3)


@dataclasses.dataclass(frozen=True)
class BuildOptions:
    target: CpuTarget
    num_threads: int = 0          # 0: the target's cores; 1: sequential
    opt_level: int = 3            # LLVM's -O level
    mr: int = 0                   # forced body uKernel (with nr); 0: measured or analytic choice
    nr: int = 0
    tuning: bool = True           # read the tuning database
    profile: bool = False         # time the public functions' ops by kind (lowering/buffers/profile.py)
    matmul_precision: str = "f32"  # "bf16": fp32 matmuls on the bf16 matrix engine (passes/select_ukernels.py)

    def __post_init__(self):
        if self.opt_level not in OPT_LEVELS:
            raise InvalidOptions(f"opt_level must be one of {OPT_LEVELS}, got {self.opt_level!r}")
        if not isinstance(self.num_threads, int) or self.num_threads < 0:
            raise InvalidOptions(f"num_threads must be 0 (the target's cores) or a positive int, got {self.num_threads!r}")
        if not isinstance(self.profile, bool):
            raise InvalidOptions(f"profile must be True or False, got {self.profile!r}")
        if (self.mr > 0) != (self.nr > 0) or self.mr < 0 or self.nr < 0:
            raise InvalidOptions(f"tile: mr and nr must be given together, both positive, got ({self.mr}, {self.nr})")
        try:
            self.pipeline()                # the pipeline pass checks its options' types and ranges
        except ValueError as err:
            raise InvalidOptions(str(err)) from None

    def threads(self) -> int:
        return self.num_threads or self.target.cores

    def pipeline(self):
        """ftuner-cpu-pipeline with these options (building it imports no MLIR)."""
        from ...passes.cpu_pipeline import CpuPipeline
        return CpuPipeline(target=self.target, num_threads=self.num_threads, mr=self.mr, nr=self.nr,
                           tuning=self.tuning, profile=self.profile, matmul_precision=self.matmul_precision)

    def stages(self) -> list:
        """The ftuner passes compile() runs, in order."""
        return self.pipeline().stages()

    def pipeline_text(self) -> str:
        return "builtin.module(" + ",".join(stage.pipeline_text() for stage in self.stages()) + ")"

    worker = "ftuner_mlir.backends.cpu.worker"           # the compiler process (../isolate.py)

    def target_argument(self, path) -> str:
        return str(path)

    def to_json(self) -> str:
        data = dataclasses.asdict(self)
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "BuildOptions":
        data = json.loads(text)
        return cls(target=CpuTarget(**data.pop("target")), **data)
