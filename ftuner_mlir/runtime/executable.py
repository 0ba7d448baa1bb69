"""A compiled module: validated calls into JIT'd code, numpy arrays in and out."""
from __future__ import annotations

import threading

import numpy as np

from ..ukernel.cover import cover
from . import shape_rules
from .descriptors import DescriptorBuffer
from .memref import entries
from .signature import Signature


class Function:
    """One public function. Every call is checked before native code runs; native code trusts its
    descriptors, so a wrong shape would read out of bounds instead of failing."""

    SHAPE_CACHE = 256     # argument-shape tuples whose checked result shapes are remembered

    def __init__(self, engine, signature: Signature):
        self.signature = signature
        self._entry = engine.lookup(signature.name)   # packed C interface, resolved once
        self._result_shapes: dict[tuple, list] = {}    # argument shapes -> result shapes (checked)
        self.rules = signature.rules()
        self._per_thread = threading.local()            # descriptor buffer of each calling thread

    def bind_shapes(self, shapes) -> dict[int, int]:
        """Dimension class -> size, checking every equality the ops require."""
        return shape_rules.bind(self.rules, shapes)

    def check(self, arrays) -> list[tuple[int, ...]]:
        """Validate the arguments; the result shapes they imply."""
        sig = self.signature
        if len(arrays) != len(sig.args):
            raise ValueError(f"@{sig.name} takes {len(sig.args)} arguments, got {len(arrays)}")
        for i, (a, spec) in enumerate(zip(arrays, sig.args)):
            if not isinstance(a, np.ndarray):
                raise ValueError(f"@{sig.name}: argument #{i} must be a numpy.ndarray, got {type(a).__name__}")
            if a.dtype != spec.dtype:
                raise ValueError(f"@{sig.name}: argument #{i} must have dtype {spec.dtype}, got {a.dtype}")
            if not a.flags.c_contiguous:
                raise ValueError(f"@{sig.name}: argument #{i} must be C-contiguous "
                                 f"(use numpy.ascontiguousarray)")
        shapes = tuple(a.shape for a in arrays)
        known = self._result_shapes.get(shapes)
        if known is None:
            known = shape_rules.result_shapes(self.rules, self.bind_shapes(shapes))
            if len(self._result_shapes) >= self.SHAPE_CACHE:
                self._result_shapes.clear()
            self._result_shapes[shapes] = known
        return known

    def __call__(self, *arrays, out=None):
        """Results are new arrays, or written into `out` (one array or a tuple, one per result)."""
        outs = self._outputs(self.check(arrays), out)
        buffer = getattr(self._per_thread, "buffer", None)
        if buffer is None:
            ranks = [len(spec.shape) for spec in (*self.signature.args, *self.signature.results)]
            buffer = self._per_thread.buffer = DescriptorBuffer(ranks)
        self._entry(buffer.fill(entries((*arrays, *outs))))
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _outputs(self, shapes: list[tuple[int, ...]], out) -> list[np.ndarray]:
        sig = self.signature
        if out is None:
            return [np.empty(shape, spec.dtype) for shape, spec in zip(shapes, sig.results)]
        outs = [out] if isinstance(out, np.ndarray) else list(out)
        if len(outs) != len(shapes):
            raise ValueError(f"@{sig.name} has {len(shapes)} results, got {len(outs)} out arrays")
        for i, (o, shape, spec) in enumerate(zip(outs, shapes, sig.results)):
            if not isinstance(o, np.ndarray) or o.dtype != spec.dtype or o.shape != shape \
                    or not o.flags.c_contiguous or not o.flags.writeable:
                raise ValueError(f"@{sig.name}: out #{i} must be a writable C-contiguous {spec.dtype} array of "
                                 f"shape {shape}, got {getattr(o, 'dtype', type(o).__name__)} "
                                 f"{getattr(o, 'shape', '')}")
        return outs

    def coverage(self, *shapes) -> list:
        """For each tiled op: (uKernel set, Coverage of these argument shapes), or (set, None) when the
        op's sizes do not follow from the arguments."""
        sig = self.signature
        values = self.bind_shapes([tuple(s) for s in shapes])
        out = []
        for uks, loops in sig.tiled_ops:
            dims = [values.get(c, sig.class_static.get(c)) for c in loops]
            if None in dims:
                out.append((uks, None))
                continue
            batch, m, n, k = dims if uks.batched else [1] + dims
            out.append((uks, cover(uks, batch, m, n, k)))
        return out

    def report(self, *shapes) -> str:
        """Which uKernels cover these argument shapes, the padded work, and the blocks per core."""
        lines = [f"@{self.signature.name} on shapes {', '.join(str(tuple(s)) for s in shapes)}"]
        covered = self.coverage(*shapes)
        if not covered:
            lines.append("  no op tiled into uKernels (nothing in this function is a supported matmul)")
        for n, (uks, cov) in enumerate(covered):
            if cov is None:
                lines.append(f"  op {n} ({uks.family}): sizes not derivable from the arguments")
                continue
            batch, m, nn, k = cov.shape
            waves, eff = cov.blocks_per_core(uks.cores)
            lines.append(f"  op {n}: {uks.family} {uks.dtype} batch={batch} M={m} N={nn} K={k}")
            lines.append(f"    block {cov.block[0]}x{cov.block[1]}, {cov.blocks} blocks over {uks.cores} cores: "
                         f"{waves} per core, wave efficiency {eff:.0%}")
            tiles = ", ".join(f"{r}x{c}: {cnt}" for (r, c), cnt in sorted(cov.tiles.items(), reverse=True))
            lines.append(f"    uKernel tiles (per reduction pass): {tiles or 'none'}")
            lines.append(f"    padded work: {cov.padded_fraction:.2%} of useful")
        return "\n".join(lines)


class Executable:
    """Returned by `ftuner_mlir.compile`. Call it like its only public function, or index by name."""

    def __init__(self, keep_alive: tuple, functions: dict, llvm_dialect: str):
        self._keep_alive = keep_alive          # context, module, engine: they must outlive the calls
        self.functions = functions
        self.llvm_dialect = llvm_dialect

    def __getitem__(self, name: str) -> Function:
        try:
            return self.functions[name]
        except KeyError:
            raise KeyError(f"no public function @{name}; have {sorted(self.functions)}") from None

    def _single(self) -> Function:
        if len(self.functions) != 1:
            raise ValueError(f"module has {len(self.functions)} public functions {sorted(self.functions)}: "
                             f"call exe['name'](...)")
        return next(iter(self.functions.values()))

    def __call__(self, *arrays, out=None):
        return self._single()(*arrays, out=out)

    def report(self, *shapes) -> str:
        fn = self._single()
        if not hasattr(fn, "report"):
            raise NotImplementedError("report() describes CPU uKernel covers; GPU modules have none yet")
        return fn.report(*shapes)
