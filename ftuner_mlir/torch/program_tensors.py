"""An exported program's tensors handed to the import child as one raw file it maps, not inside the
saved program.

torch.export.save puts every parameter in the archive: for BERT-large 1.34 GB serialized into memory in
this process (a second copy of the weights), written, then read back and deserialized by the child. Here
each tensor of the state dict and the lifted constants is written once, raw and aligned, into the
weights file the imported text names anyway (ir/weights.py); the saved program carries stand-ins of one
element broadcast to each shape; the child maps the file and puts tensors over it back in their place,
so torch-mlir's literals are views of the mapping and their bytes are neither copied nor written again
(import_worker.py).
"""
from __future__ import annotations

import contextlib
import ctypes
import json
import mmap
import warnings
from pathlib import Path

import torch

ALIGNMENT = 64          # bytes: every tensor in the weights file starts at a multiple
INDEX_SUFFIX = ".json"  # beside the weights file: name -> (offset, dtype, shape), per table


def raw_bytes(tensor: torch.Tensor) -> memoryview:
    """The tensor's bytes in its element order (a copy only where it is not contiguous)."""
    flat = tensor.detach().contiguous().reshape(-1)
    return memoryview(flat.view(torch.uint8).numpy()) if flat.numel() else memoryview(b"")


def _tables(program) -> dict[str, dict]:
    return {"state_dict": program.state_dict, "constants": program.constants}


def write(program, path: Path) -> None:
    """Every tensor of the program into `path` (raw, aligned), and their index beside it. An OSError
    (a full disk) propagates before anything was handed over."""
    index: dict[str, dict] = {}
    with open(path, "wb") as f:
        for table, tensors in _tables(program).items():
            index[table] = {}
            for name, value in tensors.items():
                if not isinstance(value, torch.Tensor):
                    continue
                f.write(b"\0" * (-f.tell() % ALIGNMENT))
                index[table][name] = (f.tell(), str(value.dtype).removeprefix("torch."), list(value.shape))
                f.write(raw_bytes(value))
    Path(str(path) + INDEX_SUFFIX).write_text(json.dumps(index))


@contextlib.contextmanager
def stand_ins(program):
    """The program with each tensor replaced by one element broadcast to its shape (what
    torch.export.save then writes: a few bytes per tensor), restored after."""
    saved = {table: dict(tensors) for table, tensors in _tables(program).items()}
    try:
        for tensors in _tables(program).values():
            for name, value in list(tensors.items()):
                if isinstance(value, torch.Tensor):
                    tensors[name] = _like(value, _stand_in(value))
        with warnings.catch_warnings():       # torch.export.save on a storage smaller than its view
            warnings.filterwarnings("ignore", message="No complete tensor found")
            yield program
    finally:
        for table, tensors in _tables(program).items():
            tensors.update(saved[table])


def _stand_in(value: torch.Tensor) -> torch.Tensor:
    if not value.numel():
        return torch.empty(value.shape, dtype=value.dtype)
    return torch.zeros((), dtype=value.dtype).expand(value.shape)


def _like(original: torch.Tensor, data: torch.Tensor) -> torch.Tensor:
    if isinstance(original, torch.nn.Parameter):
        return torch.nn.Parameter(data, requires_grad=original.requires_grad)
    return data


class Mapped:
    """In the import child: the weights file mapped privately (read in place, never copied)."""

    def __init__(self, path: str):
        with open(path, "rb") as f:
            size = f.seek(0, 2)
            self.map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY) if size else None
        self.base = ctypes.addressof(ctypes.c_char.from_buffer(self.map)) if size else 0
        self.size = size

    def restore(self, program, path: str) -> None:
        """The program's stand-ins replaced by tensors over the map (the index beside `path`)."""
        index = json.loads(Path(path + INDEX_SUFFIX).read_text())
        for table, tensors in _tables(program).items():
            for name, (offset, dtype, shape) in index[table].items():
                dtype = getattr(torch, dtype)
                count = torch.Size(shape).numel()
                data = torch.frombuffer(self.map, dtype=dtype, count=count, offset=offset) if count \
                    else torch.empty(0, dtype=dtype)
                tensors[name] = _like(tensors[name], data.reshape(shape))

    def offset_of(self, tensor: torch.Tensor) -> int | None:
        """Where `tensor`'s bytes start in the file when it is a contiguous view of the map, else None."""
        if self.map is None or not tensor.is_contiguous():
            return None
        offset = tensor.data_ptr() - self.base
        end = offset + tensor.numel() * tensor.element_size()
        return offset if 0 <= offset and end <= self.size else None
