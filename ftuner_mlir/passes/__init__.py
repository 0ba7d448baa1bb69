"""The ftuner passes, one per module, registered by their flag name.

The names load on first use (PEP 562): compile() checks its options against the pipeline's declared
ones before a warm cache hit, and that must not import MLIR and every pass's module (~1 s)."""
import importlib

_HOMES = {"ModulePass": ".base", "PassFailure": "..ir.diagnostics", "CpuPipeline": ".cpu_pipeline",
          "GpuPipeline": ".gpu_pipeline", "SelectUKernels": ".select_ukernels", "Tile": ".tile",
          "LowerCpu": ".lower_cpu", "LowerGpu": ".lower_gpu", "Bufferize": ".bufferize",
          "VectorizeUKernels": ".cpu", "CPU_PASSES": ".cpu"}
_RENAMED = {"CPU_PASSES": "PASSES"}


def _registry() -> dict:
    classes = [__getattr__(name) for name in ("SelectUKernels", "Tile", "LowerCpu", "CpuPipeline")]
    classes += [*__getattr__("CPU_PASSES"), __getattr__("Bufferize"), __getattr__("LowerGpu"), __getattr__("GpuPipeline")]
    return {cls.name: cls for cls in classes}


def __getattr__(name: str):
    if name == "REGISTRY":
        value = _registry()
    elif name in _HOMES:
        value = getattr(importlib.import_module(_HOMES[name], __name__), _RENAMED.get(name, name))
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


__all__ = ["REGISTRY", "ModulePass", "PassFailure", "SelectUKernels", "Tile", "VectorizeUKernels", "LowerCpu", "CpuPipeline", "Bufferize", "LowerGpu", "GpuPipeline"]
