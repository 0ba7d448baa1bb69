"""Weights kept out of the MLIR text, attached when the text is parsed.

A module may name a file of raw bytes and where each of its `dense_resource` blobs lies in it:

    module attributes {ftuner.external_weights = {file = "/path/weights.bin",
                                                  offsets = {ftuner_weight_0 = 0 : i64, ...}}}

(the torch front end writes it: torch/import_worker.py). `parse` maps the file and gives every constant
of such a blob an attribute over the mapped bytes: no weight is printed or parsed as hex, and the
passes read the bytes back without printing them (ir/resources.py).
"""
from __future__ import annotations

import mmap

import numpy as np
from mlir import ir

from .arena import drop_pages
from .attributes import EXTERNAL_WEIGHTS_ATTR
from .resources import ELEMENT_DTYPES, RESOURCE_NAME, blob_attr, is_kind
from .walk import walk

class ExternalWeightsError(ValueError):
    """The weights file a module names cannot be read, or does not hold a blob the module uses."""


def parse(text: str, context: ir.Context) -> ir.Module:
    """The module of `text`, its external weights attached."""
    module = ir.Module.parse(text, context)
    attach(module)
    return module


def attach(module: ir.Module) -> None:
    """Constants of blobs the module's EXTERNAL_WEIGHTS_ATTR places in a file get attributes over the
    file's mapped bytes; the attribute is then dropped (the module no longer needs the file's name)."""
    attrs = module.operation.attributes
    if EXTERNAL_WEIGHTS_ATTR not in attrs:
        return
    with module.context:
        spec = ir.DictAttr(attrs[EXTERNAL_WEIGHTS_ATTR])
        path = ir.StringAttr(spec["file"]).value
        table = ir.DictAttr(spec["offsets"])
        offsets = {table[i].name: ir.IntegerAttr(table[i].attr).value for i in range(len(table))}
        data = _mapped(path)
        made: dict[str, ir.Attribute] = {}
        for op in walk(module.operation):
            if op.operation.name != "arith.constant" or not is_kind(ir.DenseResourceElementsAttr, op.attributes["value"]):
                continue
            kind = ir.ShapedType(op.result.type)
            name = RESOURCE_NAME.match(str(op.attributes["value"])).group(1)
            if name not in offsets:
                continue
            if name not in made:
                made[name] = blob_attr(_blob(data, path, name, offsets[name], kind), name, kind)
            op.attributes["value"] = made[name]
        del attrs[EXTERNAL_WEIGHTS_ATTR]


def release(array: np.ndarray) -> None:
    """Let the kernel take back the memory of a weight read for the last time (packed into panels):
    the pages of the mapped file under `array` leave this process (a later read maps them in again),
    so a compile does not hold every weight twice, the source and its panels. Arrays over any other
    memory are left alone."""
    mapping = getattr(array, "_mmap", None)          # np.memmap and its views carry the mapping
    if not isinstance(mapping, mmap.mmap):
        return
    drop_pages(mapping, np.frombuffer(mapping, np.uint8).ctypes.data, array)


def _mapped(path: str) -> np.ndarray:
    try:
        return np.memmap(path, dtype=np.uint8, mode="r")
    except (OSError, ValueError) as err:            # ValueError: an empty file cannot be mapped
        raise ExternalWeightsError(f"cannot read the weights file {path} the module names in "
                                   f"{EXTERNAL_WEIGHTS_ATTR}: {getattr(err, 'strerror', None) or err}") from None


def _blob(data: np.ndarray, path: str, name: str, offset: int, kind: ir.ShapedType) -> np.ndarray:
    """The blob's bytes in the file, as the elements of `kind` where numpy has their type."""
    dtype = np.dtype(ELEMENT_DTYPES.get(str(kind.element_type), np.uint8))
    size = (ir.IntegerType(kind.element_type).width + 7) // 8 if dtype == np.uint8 else dtype.itemsize
    nbytes = size * int(np.prod(kind.shape))
    if offset < 0 or offset + nbytes > data.size:
        raise ExternalWeightsError(f"the weights file {path} holds {data.size} bytes; blob {name} "
                                   f"({kind}) needs bytes {offset}..{offset + nbytes}")
    return data[offset:offset + nbytes].view(dtype)
