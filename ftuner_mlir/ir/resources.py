"""The elements of constant tensors, and new constants made from arrays.

The Python bindings give no access to the bytes of a `dense_resource` attribute. Blobs made here
(a weight packed for the uKernels, weights attached from an external file: ir/weights.py) are
remembered with the array they were made from, so reading them back costs nothing. Any other blob
(one parsed from text) is read through the printer: a module holding a clone of the one op that uses
the attribute prints that attribute's blob alone, as hex, at its end.
"""
from __future__ import annotations

import re
import weakref

import ml_dtypes
import numpy as np
from mlir import ir

RESOURCE_NAME = re.compile(r"dense_resource<([^>]+)>")       # the name in an attribute's text
_BLOB = re.compile(r'([A-Za-z0-9_.$-]+)\s*:\s*"0x([0-9A-Fa-f]*)"')
ELEMENT_DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i8": np.int8, "i16": np.int16,
           "i32": np.int32, "i64": np.int64, "bf16": ml_dtypes.bfloat16}


def blob_spans(text: str) -> dict[str, tuple[int, int]]:
    """Where each `dialect_resources` blob's hex digits lie in printed IR: name -> (start, end). The
    first 8 digits are the blob's alignment, the data follows."""
    start = text.rfind("{-#")
    if start < 0:
        return {}
    return {m.group(1): (m.start(2), m.end(2)) for m in _BLOB.finditer(text, start)}


def is_kind(kind, value: ir.Attribute) -> bool:
    """Attributes of an op come back as plain ir.Attribute: a cast tells the kind (without printing)."""
    try:
        kind(value)
    except ValueError:
        return False
    return True


# hash(attribute) -> (its context, weakly; its text, `dense_resource<name> : type`; the array it was
# made from). A context that is gone may leave its storage to another one at the same address: an entry
# counts only while its own context lives (holding the attribute would keep every context alive), and
# for an attribute of the same text (a hash is no identity).
_made_here: dict[int, tuple[weakref.ref, str, np.ndarray]] = {}
_prune_at = 1024


def blob_attr(array: np.ndarray, name: str, kind: ir.ShapedType) -> ir.Attribute:
    """A dense_resource attribute of type `kind` over `array`'s memory (not copied; the attribute keeps
    it alive), remembered so that blob_array reads it back without printing."""
    raw = array.view(np.uint16) if array.dtype == ml_dtypes.bfloat16 else array   # no buffer format for bf16
    attr = ir.DenseResourceElementsAttr.get_from_buffer(memoryview(raw), name, kind)
    global _prune_at
    if len(_made_here) >= _prune_at:
        _forget_dead()
        _prune_at = 2 * max(len(_made_here), 512)
    _made_here[hash(attr)] = (weakref.ref(attr.context), str(attr), array)
    return attr


def _forget_dead() -> None:
    for key in [k for k, (context, _, _) in _made_here.items() if context() is None]:
        del _made_here[key]


def blob_array(attr: ir.Attribute) -> np.ndarray | None:
    """The array a dense_resource attribute was made from here (blob_attr), read-only, or None."""
    entry = _made_here.get(hash(attr))
    if entry is None or entry[0]() is not attr.context or entry[1] != str(attr):
        return None
    view = entry[2].view()
    view.flags.writeable = False
    return view


def resource_bytes(op) -> bytes | None:
    """The data of the one dense_resource attribute `op` carries, read through the printer (a blob made
    here is read with blob_array instead)."""
    holder = ir.Module.create(ir.Location.unknown(op.context))
    holder.body.append(op.operation.clone())
    text = str(holder)
    spans = list(blob_spans(text).values())
    if len(spans) != 1:
        return None
    begin, end = spans[0]
    return bytes.fromhex(text[begin + 8:end])


def constant_array(value: ir.Value) -> np.ndarray | None:
    """The elements of `value` when an `arith.constant` of a static tensor defines it, else None."""
    owner = value.owner
    if not isinstance(owner, ir.OpView) or owner.operation.name != "arith.constant":
        return None
    attr, kind = owner.attributes["value"], ir.ShapedType(value.type)
    dtype = ELEMENT_DTYPES.get(str(kind.element_type))
    if dtype is None or not kind.has_static_shape:
        return None
    if is_kind(ir.DenseResourceElementsAttr, attr):
        made = blob_array(attr)
        if made is not None and made.nbytes == np.dtype(dtype).itemsize * int(np.prod(kind.shape)):
            return made.reshape(-1).view(dtype).reshape(kind.shape)
        data = resource_bytes(owner)
        if data is None or len(data) != np.dtype(dtype).itemsize * int(np.prod(kind.shape)):
            return None
        return np.frombuffer(data, dtype).reshape(kind.shape)
    if is_kind(ir.DenseElementsAttr, attr):
        dense = ir.DenseElementsAttr(attr)
        if dense.is_splat:
            return np.full(kind.shape, dense.get_splat_value().value, dtype)
        array = np.asarray(dense)
        if array.dtype == object:           # bf16: the bindings' buffer protocol has no such format
            return None
        return array.reshape(kind.shape)
    return None


def blob_constant(array: np.ndarray, name: str, element_type: ir.Type) -> ir.Value:
    """An `arith.constant` (at the caller's insertion point) holding `array` as a new resource blob;
    the attribute keeps the array alive."""
    from mlir.dialects import arith

    array = np.ascontiguousarray(array)
    kind = ir.RankedTensorType.get(list(array.shape), element_type)
    return arith.ConstantOp(kind, blob_attr(array, name, kind)).result
