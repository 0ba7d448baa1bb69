"""A compiled function called on numpy arrays, every call validated first (numpy and the standard
library only: a CPU export copies this file next to its library).

Native code trusts its descriptors, so a wrong dtype, rank or shape would read or write out of bounds
instead of failing: `check` raises a ValueError naming the argument before anything native runs.
"""
from __future__ import annotations

import ctypes
import os
import threading

import numpy as np

try:                                    # inside the package
    from . import shape_rules
    from .descriptors import DescriptorBuffer, row_major_strides, template
    from .memref import data_addresses
except ImportError:                     # pragma: no cover - copied into an export
    import shape_rules
    from descriptors import DescriptorBuffer, row_major_strides, template
    from memref import data_addresses


def element_dtype(name: str) -> np.dtype:
    """The numpy dtype named `name` in a manifest; "bfloat16" is ml_dtypes' (numpy has none)."""
    if name == "bfloat16":
        try:
            import ml_dtypes
        except ImportError:
            raise ImportError("this module takes bfloat16 arrays: pip install ml_dtypes") from None
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return 1 << 40


MEMORY_BYTES = _physical_memory()      # intermediates beyond this are refused with MemoryError


def c_interface(address: int, arity: int):
    """`_mlir_ciface_<name>(descriptor*, ...)` at `address` as a ctypes function."""
    return ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * arity)(address)


def packed_interface(address: int):
    """The ExecutionEngine's wrapper of a C interface: one `void**` whose slot i points to argument i."""
    return ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address)


class AssertionFailure(RuntimeError):
    """A `cf.assert` of the compiled code failed during the call (its message says which)."""


def scalar_function(address: int, result_type, argument_types=(), packed: bool = False):
    """A compiled function of scalars at `address` as a Python callable; `packed`: the ExecutionEngine's
    wrapper of it (one `void**`: a slot per argument, then the result's)."""
    if not packed:
        return ctypes.CFUNCTYPE(result_type, *argument_types)(address)
    wrapper = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address)
    arguments, result = [kind() for kind in argument_types], result_type()
    slots = (ctypes.c_void_p * (len(arguments) + 1))(*map(ctypes.addressof, [*arguments, result]))

    def call(*values):
        for argument, value in zip(arguments, values):
            argument.value = value
        wrapper(ctypes.addressof(slots))
        return result.value
    return call


class Plan:
    """A call on one tuple of argument shapes: its result shapes, the descriptor template and where
    each descriptor starts in it (descriptors.template), and the byte strides of C-contiguous
    arguments of these shapes (what the fast path compares)."""

    __slots__ = ("results", "allocations", "words", "starts", "strides")

    def __init__(self, shapes, results, dtypes, result_dtypes, status: bool = False):
        self.results = results
        self.allocations = list(zip(results, result_dtypes))
        self.words, self.starts = template((*shapes, *results, *([()] if status else [])))
        self.strides = [tuple(s * dtype.itemsize for s in row_major_strides(shape))
                        for shape, dtype in zip(shapes, dtypes)]

    def fresh_results(self) -> list[np.ndarray]:
        return [aligned_empty(shape, dtype) for shape, dtype in self.allocations]


# Results start on a cache line: numpy's own allocations are 16-byte aligned, and a 64-byte row that
# straddles two lines costs two loads or stores (an AMX tile row: measured 15-45% on a bf16 Dense).
RESULT_ALIGNMENT = 64


def aligned_empty(shape, dtype) -> np.ndarray:
    """np.empty(shape, dtype) whose data starts on a RESULT_ALIGNMENT boundary."""
    nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    raw = np.empty(nbytes + RESULT_ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % RESULT_ALIGNMENT
    return raw[start:start + nbytes].view(dtype).reshape(shape)


class Function:
    """One public function: `fn(*arrays, out=None)`. `entry` is its C interface as a ctypes function
    (one descriptor pointer per argument, then one per result) or, with `packed`, the ExecutionEngine's
    packed wrapper of it; `rules` its shape rules (shape_rules.py); `tiled_ops` what compiled it, for
    reports: (UKernelSet, loop dim classes) per tiled op. A module with asserts takes one more
    descriptor, the call's status (lowering/llvm/asserts.py): an int32 of the calling thread, zeroed before
    each call, the number of the assert that failed after it."""

    SHAPE_CACHE = 256     # argument-shape tuples whose checked plans are remembered

    def __init__(self, entry, rules: dict, tiled_ops: tuple = (), packed: bool = False):
        self._packed = packed
        self._status = bool(rules.get("asserts"))    # the entry takes a status descriptor last
        self.name = rules["name"]
        self.rules = rules
        self.tiled_ops = tiled_ops
        self._entry = entry
        self._dtypes = [element_dtype(spec["dtype"]) for spec in rules["args"]]
        self._result_dtypes = [element_dtype(spec["dtype"]) for spec in rules["results"]]
        self._plans: dict[tuple, Plan] = {}            # argument shapes -> checked plan (see _plan)
        self._per_thread = threading.local()            # descriptor buffer of each calling thread

    def bind_shapes(self, shapes) -> dict[int, int]:
        """Dimension class -> size, checking every equality the ops require."""
        return shape_rules.bind(self.rules, shapes)

    def check(self, arrays) -> list[tuple[int, ...]]:
        """Validate the arguments; the result shapes they imply."""
        self._validate(arrays)
        return self._plan(arrays).results

    def _validate(self, arrays) -> None:
        if len(arrays) != len(self._dtypes):
            raise ValueError(f"@{self.name} takes {len(self._dtypes)} arguments, got {len(arrays)}")
        for i, (a, dtype) in enumerate(zip(arrays, self._dtypes)):
            if not isinstance(a, np.ndarray):
                raise ValueError(f"@{self.name}: argument #{i} must be a numpy.ndarray, got {type(a).__name__}")
            if a.dtype != dtype:
                raise ValueError(f"@{self.name}: argument #{i} must have dtype {dtype}, got {a.dtype}")
            if not a.flags.c_contiguous:
                raise ValueError(f"@{self.name}: argument #{i} must be C-contiguous "
                                 f"(use numpy.ascontiguousarray)")

    def _plan(self, arrays) -> Plan:
        """What a call on the arguments' shapes needs, computed and checked once per shape tuple, then
        reused."""
        shapes = tuple(a.shape for a in arrays)
        plan = self._plans.get(shapes)
        if plan is None:
            values = self.bind_shapes(shapes)
            shape_rules.check_bounds(self.rules, values)
            shape_rules.check_allocations(self.rules, values, MEMORY_BYTES)
            plan = Plan(shapes, shape_rules.result_shapes(self.rules, values), self._dtypes, self._result_dtypes,
                        self._status)
            if len(self._plans) >= self.SHAPE_CACHE:
                self._plans.clear()
            self._plans[shapes] = plan
        return plan

    def _known(self, arrays) -> Plan | None:
        """The plan of arguments exactly like ones checked before (ndarrays of the same shapes, dtypes
        and C-contiguous strides), or None: then the full check decides. The fast path of a call."""
        try:
            plan = self._plans.get(tuple([a.shape for a in arrays]))
        except Exception:                   # not arrays, or shapes that do not hash: the full check says
            return None
        if plan is None:
            return None
        for a, dtype, strides in zip(arrays, self._dtypes, plan.strides):
            if type(a) is not np.ndarray or a.dtype is not dtype or a.strides != strides:
                return None
        return plan

    def __call__(self, *arrays, out=None):
        """Results are new arrays, or written into `out` (one array or a tuple, one per result). An `out`
        that overlaps an argument gets numpy's semantics: the result is computed apart, then copied."""
        plan = self._known(arrays) if out is None else None
        if plan is not None:
            outs = plan.fresh_results()
            self._call(plan, data_addresses((*arrays, *outs)))
            return outs[0] if len(outs) == 1 else tuple(outs)
        self._validate(arrays)
        plan = self._plan(arrays)
        outs = self._outputs(plan, out)
        inputs, outputs = data_addresses(arrays), data_addresses(outs)
        if out is not None and _overlap(arrays, inputs, outs, outputs):
            apart = plan.fresh_results()
            self._call(plan, inputs + data_addresses(apart))
            for o, r in zip(outs, apart):
                o[...] = r
        else:
            self._call(plan, inputs + outputs)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _call(self, plan, addresses: list[int]) -> None:
        per_thread = self._per_thread
        buffer = getattr(per_thread, "buffer", None)
        if buffer is None:
            ranks = [len(spec["shape"]) for spec in (*self.rules["args"], *self.rules["results"])]
            buffer = per_thread.buffer = DescriptorBuffer(ranks + ([0] if self._status else []))
            per_thread.status = ctypes.c_int32(0)
        if self._status:
            status = per_thread.status
            status.value = 0
            addresses = [*addresses, ctypes.addressof(status)]
        packed = buffer.write(plan.words, plan.starts, addresses)
        if self._packed:
            self._entry(packed)
        else:
            self._entry(*buffer.pointers)
        if self._status and per_thread.status.value:
            raise AssertionFailure(f"@{self.name}: the compiled code's assertion failed: "
                                   f"{self.rules['asserts'][per_thread.status.value - 1]}")

    def _outputs(self, plan: Plan, out) -> list[np.ndarray]:
        if out is None:
            return plan.fresh_results()
        shapes = plan.results
        outs = [out] if isinstance(out, np.ndarray) else list(out)
        if len(outs) != len(shapes):
            raise ValueError(f"@{self.name} has {len(shapes)} results, got {len(outs)} out arrays")
        for i, (o, shape, dtype) in enumerate(zip(outs, shapes, self._result_dtypes)):
            if not isinstance(o, np.ndarray) or o.dtype != dtype or o.shape != shape \
                    or not o.flags.c_contiguous or not o.flags.writeable:
                raise ValueError(f"@{self.name}: out #{i} must be a writable C-contiguous {dtype} array of "
                                 f"shape {shape}, got {getattr(o, 'dtype', type(o).__name__)} "
                                 f"{getattr(o, 'shape', '')}")
        return outs


def _overlap(arrays, addresses, outs, out_addresses) -> bool:
    """Whether an output's bytes overlap an input's (contiguous arrays: one address range each)."""
    for o, start in zip(outs, out_addresses):
        end = start + o.nbytes
        for a, begin in zip(arrays, addresses):
            if a.nbytes and o.nbytes and begin < end and start < begin + a.nbytes:
                return True
    return False
