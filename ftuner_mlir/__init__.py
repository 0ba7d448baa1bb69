"""ftuner-mlir: compile dynamic-shape linalg once, serve every shape by composing static uKernels.

    import ftuner_mlir
    exe = ftuner_mlir.compile(mlir_text, target="host")
    y = exe(a, b)
"""
from .hardware.cpu import CpuTarget
from .hardware.targets import parse_target

__all__ = ["compile", "CpuTarget", "parse_target", "Executable", "freeze_arguments"]


def __getattr__(name):  # the MLIR-dependent parts load on first use, not at import
    if name in ("compile", "Executable"):
        from . import compiler
        return getattr(compiler, name)
    if name == "freeze_arguments":
        from .freeze import freeze_arguments
        return freeze_arguments
    raise AttributeError(name)
