"""MLIR text -> a lowered module plus the public functions' signatures, or a CompileError. The
compiler process (worker.py), compile(..., isolate=False), the GPU JIT and `ftuner export` all run
this one sequence: parse, select uKernels, read the signatures at the tensor level, lower."""
from __future__ import annotations

from mlir import ir

from .. import driver
from ..errors import CompileError
from ..passes import PassFailure
from ..passes.base import walk
from ..runtime.signature import analyze
from .options import BuildOptions

# What may remain once the CPU pipeline is done: LLVM ops, OpenMP ops (translated to runtime calls by
# mlir-translate), and the module itself.
_FINAL_DIALECTS = ("llvm", "omp")


def unconverted_ops(module_op) -> list:
    """Ops the lowering left outside the LLVM dialect (each would fail, or abort, in translation). The
    casts a partial conversion leaves are symptoms: listed only when nothing else is left."""
    left = [op for op in walk(module_op) if op.operation.name.split(".", 1)[0] not in _FINAL_DIALECTS]
    causes = [op for op in left if op.operation.name != "builtin.unrealized_conversion_cast"]
    return causes or left


def lower_cpu(source: str, context: ir.Context, options: BuildOptions):
    """To the LLVM dialect, checked: (module, signatures)."""
    select, *rest = options.stages()
    module, signatures = lower(source, context, select, rest)
    left = unconverted_ops(module.operation)
    if left:
        lines = [f"{driver.format_location(str(op.location))}: error: '{op.operation.name}' was not lowered to "
                 f"the LLVM dialect by the CPU pipeline (ftuner-lower-cpu has no lowering for it)" for op in left[:5]]
        if len(left) > 5:
            lines.append(f"... and {len(left) - 5} more ops outside the LLVM dialect")
        raise CompileError("\n".join(lines))
    return module, signatures


def lower(source: str, context: ir.Context, select, stages: list):
    """Parse, run `select`, read the signatures (tensor level), run `stages`: (module, signatures)."""
    try:
        module = ir.Module.parse(source, context)
        driver.run_pipeline(module, [select])
        signatures = analyze(module.operation)
        if not signatures:
            raise CompileError("the module has no public func.func with a body to compile")
        driver.run_pipeline(module, stages)
    except ir.MLIRError as err:
        raise CompileError(driver.format_mlir_error(err)) from None
    except PassFailure as err:
        raise CompileError(f"{driver.format_location(err.location)}: error: {err.message}") from None
    return module, signatures
