"""ftuner-bufferize: destination-passing calling convention, then one-shot bufferization of the whole
module. The GPU path tiles after this (its kernels take buffers); the CPU path bufferizes inside
ftuner-lower-cpu, after tiling on tensors."""
from __future__ import annotations

import dataclasses

from .base import ModulePass, Upstream
from .cpu.graph import DestinationAbi

STAGES = ["canonicalize", "eliminate-empty-tensors", "empty-tensor-to-alloc-tensor",
          "one-shot-bufferize{bufferize-function-boundaries=1 function-boundary-type-conversion=identity-layout-map}",
          "canonicalize", "cse"]


@dataclasses.dataclass(frozen=True)
class Bufferize(ModulePass):
    name = "ftuner-bufferize"
    summary = "Destination-passing C interface for public functions, then one-shot bufferization (used by the GPU path)"

    def passes(self) -> list:
        return [DestinationAbi(target=self.target), Upstream(",".join(STAGES), "one-shot bufferization, identity layouts")]
