"""Loader for a compiled module folder: a library plus `module.json` (its manifest). It serves the
on-disk cache of compiled CPU modules and the folders `ftuner export` writes, which copy this file as
`ftuner_export/__init__.py` next to the library, with the modules it imports. It needs the standard
library, plus numpy (CPU modules) or PyTorch / device pointers of your own (GPU modules).

    import sys; sys.path.insert(0, "exported")        # the folder `ftuner export` wrote
    import ftuner_export
    mod = ftuner_export.load("exported")
    y = mod["dense"](x, w)                            # numpy arrays (CPU), torch CUDA tensors (GPU)
    mod["dense"](x, w, out=y)                         # or into a preallocated output

GPU arguments are CUDA tensors (anything with data_ptr(), shape, dtype and is_contiguous()) or
DeviceArray(address, shape, dtype) for raw device pointers. Every call is checked against the shape
rules before any native code runs.
"""
from __future__ import annotations

import ctypes
import dataclasses
import json
import os
from pathlib import Path

try:                                    # inside the package
    from . import shape_rules
    from .descriptors import pack_descriptors, row_major_strides
except ImportError:                     # pragma: no cover - as a script
    import shape_rules
    from descriptors import pack_descriptors, row_major_strides


@dataclasses.dataclass
class DeviceArray:
    """A raw device buffer: address, shape, dtype name (e.g. 'float32'), C-contiguous."""
    address: int
    shape: tuple
    dtype: str = "float32"

    def data_ptr(self) -> int:
        return self.address

    def is_contiguous(self) -> bool:
        return True


# Linux hands a process the AMX tile registers only when asked: the first tile instruction of a process
# that did not ask dies of SIGILL. arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA), once per process.
_ARCH_PRCTL, _ARCH_REQ_XCOMP_PERM, _XFEATURE_XTILEDATA = 158, 0x1023, 18
_amx_granted = False


def request_amx_tile_state() -> None:
    """Ask Linux for the AMX tile state (idempotent); a RuntimeError says why when it refuses."""
    global _amx_granted
    if _amx_granted:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(_ARCH_PRCTL, _ARCH_REQ_XCOMP_PERM, _XFEATURE_XTILEDATA) != 0:
        err = ctypes.get_errno()
        raise RuntimeError(f"this module runs bf16 matmuls on AMX, but Linux refused the AMX tile state "
                           f"(arch_prctl(ARCH_REQ_XCOMP_PERM): {os.strerror(err)}): the CPU or the kernel (5.16 "
                           f"or newer) lacks AMX support; compile for a target without AMX "
                           f"(bf16_engine 'avx512_bf16' or 'none') to run here")
    _amx_granted = True


def _dtype_name(x) -> str:
    return str(x.dtype).rsplit(".", 1)[-1]


def check_driver() -> None:
    """The CUDA wrapper library needs the driver; without it, loading would fail (or abort)."""
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        raise RuntimeError("no CUDA driver: libcuda.so.1 cannot be loaded on this machine; GPU code runs only "
                           "where an NVIDIA driver is installed (compiling to PTX and `ftuner export` work "
                           "anywhere)") from None


class ExportedFunction:
    """Calls `_mlir_ciface_<name>(descriptor*...)`, `entry` being that function as a ctypes object."""

    def __init__(self, entry, rules: dict, packed: bool = False):
        self.rules = rules
        self._entry = entry
        self._entry.restype = None
        self._packed = packed             # the ExecutionEngine's wrapper: one void** to the descriptors

    def __call__(self, *args, out=None):
        rules = self.rules
        if len(args) != len(rules["args"]):
            raise ValueError(f"@{rules['name']} takes {len(rules['args'])} arguments, got {len(args)}")
        for i, (a, spec) in enumerate(zip(args, rules["args"])):
            if not hasattr(a, "data_ptr"):
                raise ValueError(f"@{rules['name']}: argument #{i} must be a CUDA tensor or DeviceArray")
            if _dtype_name(a) != spec["dtype"]:
                raise ValueError(f"@{rules['name']}: argument #{i} must have dtype {spec['dtype']}, got {_dtype_name(a)}")
            if not a.is_contiguous():
                raise ValueError(f"@{rules['name']}: argument #{i} must be contiguous")
            if getattr(a, "is_cuda", True) is False:
                raise ValueError(f"@{rules['name']}: argument #{i} must live on the GPU")
        shapes = shape_rules.result_shapes(rules, shape_rules.bind(rules, [tuple(a.shape) for a in args]))
        outs = self._outputs(args, shapes, out)
        buf, packed, pointers = pack_descriptors([(a.data_ptr(), tuple(a.shape), row_major_strides(tuple(a.shape)))
                                                  for a in (*args, *outs)])
        torch = _torch_of(args)
        if torch is not None:
            torch.cuda.synchronize()        # the kernels run on their own stream: inputs must be ready
        if self._packed:
            self._entry(ctypes.c_void_p(packed))
        else:
            self._entry(*[ctypes.c_void_p(p) for p in pointers])
        del buf                             # the descriptors lived until the call returned
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _outputs(self, args, shapes, out):
        rules = self.rules
        if out is None:
            torch = _torch_of(args)
            if torch is None:
                raise ValueError(f"@{rules['name']}: pass out=... (DeviceArray) when the inputs are not tensors")
            return [torch.empty(s, dtype=getattr(torch, r["dtype"]), device=args[0].device)
                    for s, r in zip(shapes, rules["results"])]
        outs = [out] if hasattr(out, "data_ptr") else list(out)
        for i, (o, s, r) in enumerate(zip(outs, shapes, rules["results"])):
            if tuple(o.shape) != tuple(s) or _dtype_name(o) != r["dtype"] or not o.is_contiguous():
                raise ValueError(f"@{rules['name']}: out #{i} must be a contiguous {r['dtype']} array of shape {s}")
        if len(outs) != len(shapes):
            raise ValueError(f"@{rules['name']} has {len(shapes)} results, got {len(outs)} out arrays")
        return outs


def _torch_of(args):
    if args and type(args[0]).__module__.startswith("torch"):
        import torch
        return torch
    return None


ABI_SYMBOL = "ftuner_abi"     # lowering/graph/abi.py: the library's own description of its public functions


class DamagedModule(RuntimeError):
    """The manifest does not describe the library next to it (dims, ranks, element sizes)."""


def check_abi_table(lib, functions: dict) -> None:
    """Compare the manifest's argument and result tables with the library's @ftuner_abi string (a CPU
    library built before that table existed has none: nothing to compare)."""
    try:
        address = ctypes.addressof(ctypes.c_char.in_dll(lib, ABI_SYMBOL))
    except ValueError:
        return
    table = ctypes.string_at(address).decode()
    library = dict(entry[:-1].split("(", 1) for entry in table.split(";") if entry)
    try:
        from .function import element_dtype
    except ImportError:             # pragma: no cover - as a script
        from function import element_dtype
    for name, rules in functions.items():
        buffers = [*rules["args"], *rules["results"]]
        expected = [f"{'x'.join('?' if d is None else str(d) for d in b['shape'])}:"
                    f"{element_dtype(b['dtype']).itemsize * 8}" for b in buffers]
        expected += [":32"] if rules.get("asserts") else []            # the call's status
        if library.get(name) != ",".join(expected):
            raise DamagedModule(f"module.json does not describe its library: @{name} takes "
                                f"({library.get(name, 'nothing: no such function')}) in the library, "
                                f"({','.join(expected)}) in the manifest (dims:element bits)")


_PROT_READ, _MAP_PRIVATE, _MAP_FIXED = 0x1, 0x02, 0x10
_PAGE = 4096          # backends/cpu/constants.PAGE (an export's loader imports nothing of the compiler)


def map_constants(lib, directory: Path, spec: dict) -> None:
    """Map the library's constants file (backends/cpu/constants.py) over the room the library reserves
    for it (`spec["symbol"]`, page-aligned, whole pages): read-only and shared with the page cache, so
    the weights are read from disk only where the code touches them and never copied."""
    try:
        address = ctypes.addressof(ctypes.c_char.in_dll(lib, spec["symbol"]))
    except ValueError:
        raise DamagedModule(f"the library has no symbol {spec['symbol']} to map its constants at") from None
    if address % _PAGE:
        raise DamagedModule(f"the library's room for its constants is not page-aligned ({address:#x})")
    fd = os.open(directory / spec["file"], os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        if size != spec["bytes"]:
            raise DamagedModule(f"{spec['file']} holds {size} bytes, the manifest says {spec['bytes']}")
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                              ctypes.c_long]
        got = libc.mmap(address, size, _PROT_READ, _MAP_PRIVATE | _MAP_FIXED, fd, 0)
        if got != address:
            raise OSError(ctypes.get_errno(), f"mapping {spec['file']} into the library failed: "
                                              f"{os.strerror(ctypes.get_errno())}")
    finally:
        os.close(fd)


class ExportedModule:
    """`libraries` maps the file names of the runtime libraries the manifest `needs` to their paths
    (default: next to the library, where an export puts them)."""

    def __init__(self, directory, libraries: dict | None = None):
        directory = Path(directory).resolve()
        self.metadata = json.loads((directory / "module.json").read_text())
        self.kind = self.metadata.get("kind", "gpu")
        if self.kind == "gpu":
            check_driver()
        else:
            os.environ.setdefault("KMP_BLOCKTIME", "1")     # idle OpenMP workers spin 1 ms, not 200
        if self.metadata.get("amx"):
            request_amx_tile_state()
        libraries = libraries or {}
        # the code calls into these by symbol: load them first, into the global namespace
        self._needed = [ctypes.CDLL(str(libraries.get(name, directory / name)), mode=ctypes.RTLD_GLOBAL)
                        for name in self.metadata.get("needs", [])]
        self.lib = ctypes.CDLL(str(directory / self.metadata["library"]))
        if self.kind == "cpu":
            check_abi_table(self.lib, self.metadata["functions"])
        if "constants" in self.metadata:
            map_constants(self.lib, directory, self.metadata["constants"])
        self.functions = {name: self._function(name, shape_rules.from_json(rules))
                          for name, rules in self.metadata["functions"].items()}
        self.profiler = self._profiler()

    def _profiler(self):
        """The clocks of a module compiled with profile=True, else None."""
        sites = self.metadata.get("profile")
        if not sites:
            return None
        try:
            from .profiler import TAKE_PROFILE, Profiler, take_profile
        except ImportError:             # pragma: no cover - as a script
            from profiler import TAKE_PROFILE, Profiler, take_profile
        return Profiler(take_profile(ctypes.cast(getattr(self.lib, TAKE_PROFILE), ctypes.c_void_p).value), sites)

    def _function(self, name: str, rules: dict):
        entry = getattr(self.lib, f"_mlir_ciface_{name}")
        if self.kind == "gpu":
            return ExportedFunction(entry, rules)
        try:                            # numpy is needed by CPU modules only
            from .function import Function, c_interface
        except ImportError:             # pragma: no cover - as a script
            from function import Function, c_interface
        address = ctypes.cast(entry, ctypes.c_void_p).value
        status = 1 if rules.get("asserts") else 0           # the call's status descriptor, last
        return Function(c_interface(address, len(rules["args"]) + len(rules["results"]) + status), rules)

    def __getitem__(self, name: str):
        try:
            return self.functions[name]
        except KeyError:
            raise KeyError(f"no public function @{name}; have {sorted(self.functions)}") from None


def needs(directory) -> list[str]:
    """File names of the runtime libraries a module folder's code calls into."""
    return json.loads((Path(directory) / "module.json").read_text()).get("needs", [])


def load(directory, libraries: dict | None = None) -> ExportedModule:
    return ExportedModule(directory, libraries)
