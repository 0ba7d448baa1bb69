"""The target as LLVM sees it: a triple and a CPU name, on the module and on every function, so LLVM
compiles for the target whichever route it takes (llc in the compiler process, or the in-process JIT,
whose machine is the host's: a function's `target-cpu` overrides it)."""
from __future__ import annotations

import functools
import re
import subprocess

from ...runtime import libs

TRIPLE = "x86_64-unknown-linux-gnu"
ISA_LEVEL = {"avx512": "x86-64-v4", "avx2": "x86-64-v3", "sse": "x86-64-v2"}
PRESET_CPU = {"intel-spr": "sapphirerapids", "amd-zen4": "znver4", "amd-zen5": "znver5"}     # presets that name a real CPU
# A function's target-features replace the machine's: the JIT's machine is the host's, so the ISA
# extensions a target lacks are switched off explicitly (their dependents go with them).
DISABLED = {"avx512": [], "avx2": ["-avx512f"], "sse": ["-avx"]}
# ...and the bf16 matrix engine a target names is switched on (an ISA level alone does not imply it).
ENGINE_FEATURES = {"amx": ["+amx-tile", "+amx-bf16"], "avx512_bf16": ["+avx512bf16"], "none": []}


@functools.cache
def host_cpu() -> str:
    """This machine's CPU as LLVM names it (`llc --version` says 'Host CPU: sapphirerapids')."""
    out = subprocess.run([libs.tool("llc"), "--version"], capture_output=True, text=True, timeout=60).stdout
    m = re.search(r"Host CPU:\s*(\S+)", out)
    return m.group(1) if m else "native"


def llvm_cpu(target) -> str:
    if target.name == "host":
        return host_cpu()
    return PRESET_CPU.get(target.name, ISA_LEVEL[target.isa])


def annotate(module_op, target) -> None:
    """`llvm.target_triple` on the module; `target_cpu` and, where the target lacks an extension the
    host may have, `target_features` on each function definition (LLVM dialect)."""
    from mlir import ir      # here: the parent names its target (toolchain.cpu_identity) without MLIR

    module_op.attributes["llvm.target_triple"] = ir.StringAttr.get(TRIPLE)
    cpu = ir.StringAttr.get(llvm_cpu(target))
    changed = DISABLED[target.isa] + ENGINE_FEATURES[target.bf16_engine]
    quoted = ", ".join(f'"{feature}"' for feature in changed)
    features = ir.Attribute.parse(f"#llvm.target_features<[{quoted}]>") if changed else None
    for op in module_op.regions[0].blocks[0].operations:
        if op.operation.name == "llvm.func" and op.regions[0].blocks:
            op.attributes["target_cpu"] = cpu
            if features is not None:
                op.attributes["target_features"] = features
