"""The only place that knows CPU from GPU: how each backend lowers, builds, caches, loads and exports.

A backend is a namespace with `request(source, target, **options)` (validated options and the key of
the result), `build(request)` (an Executable) and `export(source, target, out, name, options)`.

A request's source is MLIR text, or a callable that produces it, with `source_key` standing for it in
the key: the torch front end keys a module by its exported program and imports it only on a miss."""
from __future__ import annotations

import types
from typing import Callable

Source = str | Callable[[], str]


def text(source: Source) -> str:
    """The MLIR text of a request's source (produced now when it is a callable)."""
    return source() if callable(source) else source


def backend_for(target) -> types.SimpleNamespace:
    if target.kind == "gpu":
        from .gpu import compile as gpu_compile, export as gpu_export
        return types.SimpleNamespace(name="gpu", request=gpu_compile.request, build=gpu_compile.build,
                                     export=gpu_export.export)
    from .cpu import compile as cpu_compile, export as cpu_export
    return types.SimpleNamespace(name="cpu", request=cpu_compile.request, build=cpu_compile.build,
                                 export=cpu_export.export)
