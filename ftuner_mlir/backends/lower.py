"""MLIR text -> a lowered module plus the public functions' signatures, or a CompileError. The
compiler process (worker.py), compile(..., isolate=False), the GPU JIT and `ftuner export` all run
this one sequence: parse, select uKernels, read the signatures at the tensor level, lower."""
from __future__ import annotations

import dataclasses

from mlir import ir

from .. import driver
from ..analysis.signature import analyze
from ..errors import CompileError
from ..lowering.llvm import asserts
from ..ir import weights
from ..ir.diagnostics import PassFailure, format_location, format_mlir_error
from .cpu.options import BuildOptions


def lower_cpu(source: str, context: ir.Context, options: BuildOptions):
    """To the LLVM dialect (ftuner-lower-cpu checks that nothing else is left): (module, signatures)."""
    select, *rest = options.stages()
    return lower(source, context, select, rest)


def lower(source: str, context: ir.Context, select, stages: list):
    """Parse, run `select`, read the signatures (tensor level), run `stages`: (module, signatures)."""
    try:
        module = weights.parse(source, context)
        driver.run_pipeline(module, [select])
        signatures = analyze(module.operation)
        if not signatures:
            raise CompileError("the module has no public func.func with a body to compile")
        driver.run_pipeline(module, stages)
        reported = tuple(asserts.messages(module.operation))
        signatures = {name: dataclasses.replace(sig, asserts=reported) for name, sig in signatures.items()}
    except ir.MLIRError as err:
        raise CompileError(format_mlir_error(err)) from None
    except PassFailure as err:
        raise CompileError(f"{format_location(err.location)}: error: {err.message}") from None
    except weights.ExternalWeightsError as err:
        raise CompileError(str(err)) from None
    return module, signatures
