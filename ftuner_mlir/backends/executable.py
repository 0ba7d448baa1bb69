"""A compiled module: its validated functions (function.py) and reports of how uKernels cover a shape."""
from __future__ import annotations

from ..runtime.function import Function
from ..runtime.profiler import Profile, Profiler
from ..ukernel.cover import cover


def coverage(fn: Function, *shapes) -> list:
    """For each tiled op of `fn`: (uKernel set, Coverage of these argument shapes), or (set, None) when
    the op's sizes do not follow from the arguments."""
    values = fn.bind_shapes([tuple(s) for s in shapes])
    static = fn.rules["class_static"]
    out = []
    for uks, loops in fn.tiled_ops:
        dims = [values.get(c, static.get(c)) for c in loops]
        if None in dims:
            out.append((uks, None))
            continue
        batch, m, n, k = dims if uks.batched else [1] + dims
        out.append((uks, cover(uks, batch, m, n, k)))
    return out


def report(fn: Function, *shapes) -> str:
    """Which uKernels cover these argument shapes, the padded work, and the blocks per core."""
    lines = [f"@{fn.name} on shapes {', '.join(str(tuple(s)) for s in shapes)}"]
    covered = coverage(fn, *shapes)
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
    """Returned by `ftuner_mlir.compile`. Call it like its only public function, or index by name.
    `origin` says where the native code came from: "cache" (loaded from the on-disk cache), "built"
    (compiled by a child process: a CPU library, or GPU host code the ExecutionEngine JITs here) or
    "in-process" (isolate=False: lowered and JIT'd in this process)."""

    def __init__(self, keep_alive: tuple, functions: dict, llvm_dialect: str | None = None,
                 origin: str = "built", library: str | None = None, profiler: Profiler | None = None):
        self._keep_alive = keep_alive          # engine or library handles: they must outlive the calls
        self.functions = functions
        self._llvm_dialect = llvm_dialect
        self.origin = origin
        self.library = library                 # path of the shared library, when there is one
        self._profiler = profiler              # compile(..., profile=True): the module's clocks

    @property
    def llvm_dialect(self) -> str:
        if self._llvm_dialect is None:
            raise AttributeError("the LLVM dialect text is kept only by compile(..., isolate=False); "
                                 "a library built in a child process keeps the native code only")
        return self._llvm_dialect

    def __getitem__(self, name: str):
        try:
            return self.functions[name]
        except KeyError:
            raise KeyError(f"no public function @{name}; have {sorted(self.functions)}") from None

    def _single(self):
        if len(self.functions) != 1:
            raise ValueError(f"module has {len(self.functions)} public functions {sorted(self.functions)}: "
                             f"call exe['name'](...)")
        return next(iter(self.functions.values()))

    def __call__(self, *arrays, out=None):
        return self._single()(*arrays, out=out)

    def coverage(self, *shapes) -> list:
        return coverage(self._cpu_function(), *shapes)

    def report(self, *shapes) -> str:
        return report(self._cpu_function(), *shapes)

    def profile(self, *arrays, calls: int = 10, function: str | None = None) -> Profile:
        """Run `calls` calls of the function (the only one, or `function`) on `arrays` and return where
        their time went, per call: uKernels, elementwise, reductions, copies, fills, glue (print it
        for a table). Needs a module compiled with profile=True."""
        if self._profiler is None:
            raise ValueError("this module was compiled without clocks: compile(..., profile=True)")
        if not isinstance(calls, int) or isinstance(calls, bool) or calls < 1:
            raise ValueError(f"calls must be a positive int, got {calls!r}")
        fn = self[function] if function is not None else self._single()
        self._profiler.take()                  # clocks from zero: earlier calls do not count
        for _ in range(calls):
            fn(*arrays)
        return self._profiler.breakdown(fn.name, self._profiler.take(), calls)

    def _cpu_function(self) -> Function:
        fn = self._single()
        if not isinstance(fn, Function):
            raise NotImplementedError("report() describes CPU uKernel covers; GPU modules have none yet")
        return fn
