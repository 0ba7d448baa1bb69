"""The key of a torch module's compilation, taken from what torch.export produced: the module cache is
looked up before torch-mlir runs, so a warm start skips the import (tens of seconds for BERT-base).

It hashes everything the imported MLIR is a function of: the exported graph's code (ops, constants,
the order of inputs), its signature, the inputs' dtypes and symbolic shapes with their ranges, the
bytes of every parameter, buffer and lifted constant, and the versions of torch and torch-mlir (the
package's own source and the MLIR wheels join it in the module cache's key). Compile options, the
target and the tuning database join it there too (backends/cpu/compile.request).
"""
from __future__ import annotations

import functools
from importlib import metadata

import torch

from ..backends.digest import digest
from .program_tensors import raw_bytes

IMPORTERS = ("torch", "torch-mlir")


def fingerprint(program) -> str:
    parts = [part.encode() for part in (
        _versions(), program.graph_module.code, str(program.graph_signature), _inputs(program),
        str(sorted((str(k), str(v)) for k, v in program.range_constraints.items())))]
    for name, tensor in sorted(_tensors(program), key=lambda item: item[0]):
        parts += [f"{name} {tensor.dtype} {tuple(tensor.shape)}".encode(), raw_bytes(tensor)]
    return "torch.export " + digest(parts)


@functools.cache
def _versions() -> str:
    return " ".join(f"{name}=={metadata.version(name)}" for name in IMPORTERS)


def _inputs(program) -> str:
    """Each placeholder's dtype and (symbolic) shape, or its Python value."""
    out = []
    for node in program.graph.nodes:
        if node.op == "placeholder":
            val = node.meta.get("val")
            out.append(f"{node.name}: {val.dtype} {tuple(val.shape)}" if isinstance(val, torch.Tensor)
                       else f"{node.name}: {val!r}")
    return "\n".join(out)


def _tensors(program):
    yield from program.state_dict.items()
    yield from ((name, value) for name, value in program.constants.items() if isinstance(value, torch.Tensor))
