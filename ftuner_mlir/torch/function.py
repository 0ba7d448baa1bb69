"""A compiled PyTorch module as a callable on torch tensors.

Inputs are flattened the way torch.export flattened them; every tensor input is checked (dtype, rank,
declared dim ranges, then the compiled function's own shape rules) before native code runs, and
handed over without a copy when it is contiguous on the CPU (torch.Tensor.numpy shares the memory).
Results come back as tensors sharing the native code's output buffers, in the module's output structure.
"""
from __future__ import annotations

import copy
import dataclasses
import threading

import numpy as np
import torch
from torch.utils import _pytree as pytree

from .bf16_models import widened
from .exporting import DimRange, user_input_nodes


class CompiledModule:
    """`compiled(*args, **kwargs)` like the module; one compilation serves every shape in the ranges."""

    def __init__(self, executable, program, ranges: list[DimRange], source_bytes: int | None, timings: dict,
                 watch=None, on_weight_change: str = "ignore", again=None, bf16: bool = False):
        self.executable = executable
        self.function = executable["main"]
        self.ranges = ranges
        self.timings = timings                 # seconds: export, key, import (torch-mlir; 0 when cached), compile
        self.source_bytes = source_bytes       # of the imported MLIR text; None: the module came from a cache
        self._watch = watch                    # weights.WeightWatch of the module's state, or None
        self._on_weight_change = on_weight_change
        self._again = again                    # () -> a CompiledModule from the current weights
        self._recompiling = threading.Lock()
        self._bf16 = bf16                      # a bf16 model's fp32 twin: bf16 in and out (bf16_models.py)
        self._in_spec = program.call_spec.in_spec
        self._out_spec = program.call_spec.out_spec
        example = pytree.tree_unflatten([_leaf(n) for n in user_input_nodes(program)], self._in_spec)
        self._constants = [(i, v) for i, v in enumerate(pytree.tree_leaves(example)) if not isinstance(v, _Tensor)]

    def __call__(self, *args, **kwargs):
        if self._watch is not None:
            self._check_weights()
        if self._bf16:
            args, kwargs = widened((args, kwargs))
        leaves, spec = pytree.tree_flatten((args, kwargs))
        if spec != self._in_spec:
            raise ValueError(f"the compiled module was exported with inputs structured as {self._in_spec}, "
                             f"got {spec}")
        for i, value in self._constants:
            if leaves[i] != value:
                raise ValueError(f"input #{i} was {value!r} at export time (a constant of the compiled code), "
                                 f"got {leaves[i]!r}")
        tensors = [t for t in leaves if isinstance(t, torch.Tensor)]
        self._check_ranges(tensors)
        arrays = [_as_array(t, i) for i, t in enumerate(tensors)]
        results = self.function(*arrays)
        results = results if isinstance(results, tuple) else (results,)
        return pytree.tree_unflatten([self._result(r) for r in results], self._out_spec)

    def _result(self, array: np.ndarray) -> torch.Tensor:
        out = torch.from_numpy(array)
        return out.to(torch.bfloat16) if self._bf16 and out.is_floating_point() else out

    def _check_weights(self) -> None:
        if not self._watch.stale(self._on_weight_change, "the module"):
            return
        with self._recompiling:                         # policy "recompile"
            if self._watch.changed() is not None:       # not done by another thread meanwhile
                fresh = self._again()
                self.executable, self.function, self._watch = fresh.executable, fresh.function, fresh._watch
                self.timings, self.source_bytes = fresh.timings, fresh.source_bytes

    def taking_one(self, dims) -> "CompiledModule":
        """This module also taking size 1 at `dims` ((input, dim) pairs) where torch.export's ranges
        start at 2 (its 0/1 specialization: the code itself serves any size), for a caller that proved
        the program holds there (dynamo.py: a graph Dynamo specialized at size 1)."""
        twin = copy.copy(self)
        twin.ranges = [dataclasses.replace(r, min=1) if (r.input, r.dim) in dims and r.min == 2 and r.step == 1 else r
                       for r in self.ranges]
        return twin

    def _check_ranges(self, tensors) -> None:
        for r in self.ranges:
            if r.input >= len(tensors) or r.dim >= tensors[r.input].dim():
                continue                           # the function's own checks name the rank
            size = tensors[r.input].shape[r.dim]
            if size < r.min or (r.max is not None and size > r.max):
                high = "" if r.max is None else f"..{r.max}"
                raise ValueError(f"input #{r.input} dim {r.dim} is {size}, outside the range {r.min}{high} "
                                 f"declared for '{r.name}' in dynamic_shapes")
            if (size - r.min) % r.step:
                raise ValueError(f"input #{r.input} dim {r.dim} is {size}, not one of {r.min}, {r.min + r.step}, "
                                 f"{r.min + 2 * r.step}, ... as '{r.name}' declared in dynamic_shapes")


class _Tensor:                       # marks a tensor leaf in the example inputs
    pass


def _leaf(node):
    value = node.meta.get("val")
    return _Tensor() if isinstance(value, torch.Tensor) else value


def _as_array(t: torch.Tensor, i: int) -> np.ndarray:
    if t.device.type != "cpu":
        raise ValueError(f"input #{i} is on {t.device}; the compiled module runs on the CPU")
    if t.requires_grad:
        t = t.detach()
    return t.contiguous().numpy()
