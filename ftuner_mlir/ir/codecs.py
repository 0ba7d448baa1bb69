"""uKernel sets as MLIR attribute values, and back: select writes them, tile and the shape analysis read them
(the attribute names: ir/attributes.py)."""
from __future__ import annotations

import dataclasses

from mlir import ir

from ..families.matmul import HeadViews
from ..ukernel.bf16_space import Bf16Set
from ..ukernel.gpu_space import GpuTile, GpuUKernelSet
from ..ukernel.space import UKernelSet
from .attributes import AMX_ATTR, AMX_HEAD_VIEWS_ATTR, ATTR, GPU_ATTR

def parallel_outer(dims: int = 1) -> ir.Attribute:
    """The value of PARALLEL_OUTER_ATTR: how many outer dims (1 or 2) are split into tasks."""
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), dims)


_GPU_TILE_FIELDS = ("bm", "bn", "bk", "tm", "tn")


def ukernel_set_to_attr(uks: UKernelSet) -> ir.Attribute:
    return _set_to_attr(uks)


def ukernel_set_from_attr(attr: ir.Attribute) -> UKernelSet:
    """Raises ValueError naming what is missing or wrong; a field with a default may be left out."""
    return _set_from_attr(attr, UKernelSet, ATTR)


def amx_set_to_attr(aset: Bf16Set) -> ir.Attribute:
    return _set_to_attr(aset)


def amx_set_from_attr(attr: ir.Attribute) -> Bf16Set:
    """Raises ValueError naming what is missing or wrong."""
    return _set_from_attr(attr, Bf16Set, AMX_ATTR)


def head_views_to_attr(views: HeadViews) -> ir.Attribute:
    """{a = array<i64: ...>, ...}: the permutation of each operand given as a head view."""
    return ir.DictAttr.get({name: ir.DenseI64ArrayAttr.get(list(perm)) for name, perm in views.as_tuples().items()})


def head_views_from_attr(attr: ir.Attribute) -> HeadViews:
    """Raises ValueError naming what is wrong (HeadViews checks the permutations)."""
    if not isinstance(attr, ir.DictAttr):
        raise ValueError(f"{AMX_HEAD_VIEWS_ATTR} must be a dictionary attribute")
    d = ir.DictAttr(attr)
    perms = {}
    for name in ("a", "b", "c"):
        if name in d:
            if not isinstance(d[name], ir.DenseI64ArrayAttr):
                raise ValueError(f"{AMX_HEAD_VIEWS_ATTR} field '{name}' must be an array<i64>")
            perms[name] = tuple(ir.DenseI64ArrayAttr(d[name]))
    return HeadViews(**perms)


def _set_to_attr(value) -> ir.Attribute:
    """A set's fields as a dictionary: integers as i64, the rest (names) as strings."""
    i64 = ir.IntegerType.get_signless(64)
    fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    return ir.DictAttr.get({name: ir.IntegerAttr.get(i64, v) if isinstance(v, int) else ir.StringAttr.get(v)
                            for name, v in fields.items()})


def _set_from_attr(attr: ir.Attribute, kind, name: str):
    if not isinstance(attr, ir.DictAttr):
        raise ValueError(f"{name} must be a dictionary attribute")
    d = ir.DictAttr(attr)
    values = {}
    for f in dataclasses.fields(kind):
        if f.name not in d:
            if f.default is not dataclasses.MISSING:
                continue
            raise ValueError(f"{name} lacks field '{f.name}'")
        raw = d[f.name]
        if f.type in (int, "int"):
            if not isinstance(raw, ir.IntegerAttr):
                raise ValueError(f"{name} field '{f.name}' must be an integer")
            values[f.name] = ir.IntegerAttr(raw).value
        else:
            if not isinstance(raw, ir.StringAttr):
                raise ValueError(f"{name} field '{f.name}' must be a string")
            values[f.name] = ir.StringAttr(raw).value
    return kind(**values)


def gpu_set_to_attr(uks: GpuUKernelSet) -> ir.Attribute:
    tile = lambda t: ir.DenseI64ArrayAttr.get([getattr(t, f) for f in _GPU_TILE_FIELDS])  # noqa: E731
    return ir.DictAttr.get({"family": ir.StringAttr.get(uks.family), "dtype": ir.StringAttr.get(uks.dtype),
                            "body": tile(uks.body), "edge": tile(uks.edge),
                            "sms": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), uks.sms)})


def gpu_set_from_attr(attr: ir.Attribute) -> GpuUKernelSet:
    """Raises ValueError naming what is missing or wrong."""
    if not isinstance(attr, ir.DictAttr):
        raise ValueError(f"{GPU_ATTR} must be a dictionary attribute")
    for key in ("family", "dtype", "body", "edge", "sms"):
        if key not in attr:
            raise ValueError(f"{GPU_ATTR} lacks field '{key}'")
    tiles = []
    for key in ("body", "edge"):
        values = list(attr[key]) if isinstance(attr[key], ir.DenseI64ArrayAttr) else []
        if len(values) != len(_GPU_TILE_FIELDS) or min(values) <= 0:
            raise ValueError(f"{GPU_ATTR} field '{key}' must be array<i64: bm, bn, bk, tm, tn>, all positive")
        tiles.append(GpuTile(*values))
    return GpuUKernelSet(attr["family"].value, attr["dtype"].value, tiles[0], tiles[1], attr["sms"].value)
