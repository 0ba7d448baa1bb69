"""A compiled function's shape rules, checked before native code runs (standard library only: the AOT
export copies this file next to the exported library, for machines without the package).

`rules` is a JSON-friendly dict: `name`; `args` and `results`, each a list of {"dtype", "shape"} with
None for a dynamic dim; `arg_dims` and `result_dims`, the equality class of every dim; `class_static`,
class -> fixed size; `class_reason`, class -> the op that ties its members together; `derived`, the
classes the function body computes from others by index arithmetic (a convolution's output size),
as [class, op, [operand classes], why, is a tensor dim] in an order where each operand is known before it is used.
"""
from __future__ import annotations


def from_json(rules: dict) -> dict:
    """JSON turns the integer class keys into strings: turn them back."""
    out = dict(rules)
    for key in ("class_static", "class_reason"):
        out[key] = {int(k): v for k, v in rules[key].items()}
    return out


def bind(rules: dict, shapes) -> dict[int, int]:
    """Dimension class -> size from the argument shapes, checking every equality the ops require.
    Raises ValueError naming the argument and dim."""
    name, static_of, why = rules["name"], rules["class_static"], rules["class_reason"]
    if len(shapes) != len(rules["args"]):
        raise ValueError(f"@{name} takes {len(rules['args'])} arguments, got {len(shapes)}")
    values: dict[int, int] = {}
    first: dict[int, tuple[int, int]] = {}
    for i, (shape, spec, classes) in enumerate(zip(shapes, rules["args"], rules["arg_dims"])):
        shape = tuple(shape)
        if len(shape) != len(spec["shape"]):
            raise ValueError(f"@{name}: argument #{i} must have rank {len(spec['shape'])}, got shape {shape}")
        for d, (size, static, cls) in enumerate(zip(shape, spec["shape"], classes)):
            if static is not None and size != static:
                raise ValueError(f"@{name}: argument #{i} dim {d} must be {static}, got {size} (shape {shape})")
            if cls in static_of and size != static_of[cls]:
                raise ValueError(f"@{name}: argument #{i} dim {d} must be {static_of[cls]} "
                                 f"({why.get(cls, 'fixed by the function body')}), got {size}")
            if cls in values and values[cls] != size:
                j, e = first[cls]
                raise ValueError(f"@{name}: argument #{i} dim {d} is {size} but must equal argument #{j} dim {e}, "
                                 f"which is {values[cls]} ({why.get(cls, 'shared dimension')})")
            values.setdefault(cls, size)
            first.setdefault(cls, (i, d))
    _derive(rules, values, first)
    return values


# index arithmetic the function body may use to compute a size (arith dialect semantics on integers)
def _div_toward_zero(a: int, b: int) -> int:
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b > 0) else -quotient


_U64 = (1 << 64) - 1        # unsigned comparisons see a negative index as its two's complement


OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "floordiv": lambda a, b: a // b,
    "ceildiv": lambda a, b: -(-a // b),
    "div": _div_toward_zero,
    "rem": lambda a, b: a - _div_toward_zero(a, b) * b,                # the sign of the dividend
    "mod": lambda a, b: a % b,                                         # affine mod: never negative
    "max": max,
    "min": min,
    "eq": lambda a, b: int(a == b),
    "ne": lambda a, b: int(a != b),
    "slt": lambda a, b: int(a < b),
    "sle": lambda a, b: int(a <= b),
    "sgt": lambda a, b: int(a > b),
    "sge": lambda a, b: int(a >= b),
    "ult": lambda a, b: int((a & _U64) < (b & _U64)),
    "ule": lambda a, b: int((a & _U64) <= (b & _U64)),
    "ugt": lambda a, b: int((a & _U64) > (b & _U64)),
    "uge": lambda a, b: int((a & _U64) >= (b & _U64)),
    "select": lambda c, a, b: a if c else b,
}


def _derive(rules: dict, values: dict[int, int], first: dict) -> None:
    """Evaluate the computed sizes; one that an argument also fixes must agree with it, and none may be
    negative (an allocation of that size would be a crash in native code)."""
    name, static_of = rules["name"], rules["class_static"]
    for cls, op, operands, why, is_size in rules.get("derived", []):
        xs = [values.get(c, static_of.get(c)) for c in operands]
        if None in xs:
            continue
        if xs[-1] == 0 and op in ("floordiv", "ceildiv", "div", "rem", "mod"):
            raise ValueError(f"@{name}: these shapes make {why} divide by zero")
        v = OPS[op](*xs)
        known = values.get(cls, static_of.get(cls))
        if known is not None and known != v:
            where = "a static size" if cls not in first else "argument #{} dim {}".format(*first[cls])
            raise ValueError(f"@{name}: {where} is {known} but {why} computes it as {v} from the other shapes")
        if v < 0 and is_size:           # intermediate results, e.g. H - KH, may be negative
            raise ValueError(f"@{name}: these shapes make {why} compute a negative size ({v})")
        values[cls] = v


def _value(operand, values: dict, static_of: dict) -> int:
    kind, x = operand
    return x if kind == "const" else values.get(x, static_of.get(x, 0))


def check_bounds(rules: dict, values: dict[int, int]) -> None:
    """Every slice dim must lie inside its tensor: 0 <= offset and offset + (size - 1) * stride < dim
    (when size > 0)."""
    static_of = rules["class_static"]
    for b in rules.get("bounds", []):
        size = _value(b["size"], values, static_of)
        if size <= 0:
            continue
        offset = _value(b["offset"], values, static_of)
        end = offset + (size - 1) * b["stride"] + 1
        dim = values.get(b["tensor"], static_of.get(b["tensor"]))
        if offset < 0:
            raise ValueError(f"@{rules['name']}: these shapes make the {b['why']} start at index {offset}")
        if dim is None or end > dim:
            raise ValueError(f"@{rules['name']}: these shapes make the {b['why']} read or write "
                             f"{end} elements along a dim of {dim}")


def check_allocations(rules: dict, values: dict[int, int], limit: int) -> None:
    """The intermediate tensors these shapes need must fit in `limit` bytes (checked before native code
    runs: there a failed allocation is a crash, not an exception)."""
    static_of = rules["class_static"]
    total = 0
    for dims, size in rules.get("allocations", []):
        elements = 1
        for c in dims:
            elements *= values.get(c, static_of.get(c, 0))
        total += elements * size
    if total > limit:
        raise MemoryError(f"@{rules['name']}: these shapes need {total / 2**30:.1f} GiB of intermediate tensors, "
                          f"more than this machine's {limit / 2**30:.1f} GiB")


def result_shapes(rules: dict, values: dict[int, int]) -> list[tuple[int, ...]]:
    static_of = rules["class_static"]
    return [tuple(values[c] if c in values else static_of[c] for c in dims) for dims in rules["result_dims"]]
