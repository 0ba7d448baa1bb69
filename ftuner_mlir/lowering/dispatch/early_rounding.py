"""A matmul operand rounded to bf16 where it is made, not where the matmul reads it.

matmul_precision="bf16" rounds each fp32 activation a matmul reads. Attention's operands reach their
batch matmuls through views and transposes (softmax's probabilities through a reshape; the context
through expand, reshape, the head transpose, reshape and collapse): rounded at the matmul, each is a
pass of its own over fp32 data, and every transpose before it moves fp32 (8 bytes an element). Rounding
commutes with moving data, so the rounding goes up the chain to the op that computes the value, and the
views, transposes and broadcast gathers (broadcasts.py: torch-mlir's dynamic expand, which the query,
key and value pass through) are made again on bf16: a rounding right after an elementwise producer (softmax's
division) is then fused into it by the elementwise fusion that follows, and the transposes move 4 bytes
an element. Only a chain whose every value has one reader moves (otherwise the fp32 chain stays for
the others and nothing is saved).

A chain that starts at a slice of a value every reader of which slices it for matmuls (GPT-2's fused
query/key/value projection, split into three column slices) rounds that value once, whole, and takes
its slice of the bf16 copy: the rounding then goes up to the projection (its epilogue writes bf16)
instead of three passes over strided fp32 slices (0.7 ms each per layer at batch 16, T = 128).
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import linalg, tensor

from ...ir.build import empty_like, narrow_to_bf16, view_on, with_element
from ...ir.match import classify
from ...ir.walk import defining_op
from ..graph.broadcasts import gather

_VIEWS = ("tensor.reshape", "tensor.expand_shape", "tensor.collapse_shape", "tensor.cast")
_MOVES = _VIEWS + ("linalg.transpose",)


def _readers(value: ir.Value) -> int:
    """Uses of `value` other than tensor.dim (sizes fold to the source's: the fp32 chain still dies)."""
    return sum(use.owner.name != "tensor.dim" for use in value.uses)


def _chain(value: ir.Value) -> list:
    """The views, transposes and gathers `value` is made by, outermost first, down to the first value read by
    more than its view or made by anything else."""
    chain = []
    while (op := defining_op(value)) is not None and (op.name in _MOVES or gather(op) is not None):
        source = _source(op)
        if _readers(source) != 1:
            break
        chain.append(op)
        value = source
    return chain


def rounded_at_source(value: ir.Value, round_whole=None, every_reader: bool = False) -> ir.Value:
    """`value` rounded to bf16 (at the insertion point, or at its source: module docstring).
    `round_whole(v)` rounds a sliced value whole (once, however many slices read it); None: slices
    are rounded on their own. `every_reader`: all readers of `value` will read the rounded one (the
    slices of a value rounded whole), so its chain moves however many there are."""
    chain = _chain(value) if every_reader or _readers(value) == 1 else []
    top = _source(chain[-1]) if chain else value
    whole = _sliced_for_matmuls(top) if round_whole is not None and _readers(top) == 1 else None
    if whole is not None:
        cut = defining_op(top)
        with _after(whole), cut.location:
            rounded_whole = round_whole(whole)
        with ir.InsertionPoint(cut), cut.location:
            rounded = view_on(cut, rounded_whole)
    elif not chain:
        return narrow_to_bf16(value)
    else:
        with ir.InsertionPoint(chain[-1]), chain[-1].location:
            rounded = narrow_to_bf16(top)
    for op in reversed(chain):
        with ir.InsertionPoint(op), op.location:
            rounded = _remade(op, rounded)
    return rounded


def _after(value: ir.Value) -> ir.InsertionPoint:
    owner = defining_op(value)
    return ir.InsertionPoint.after(owner) if owner is not None else ir.InsertionPoint.at_block_begin(value.owner)


def _sliced_for_matmuls(value: ir.Value) -> ir.Value | None:
    """The value `value` is a tensor.extract_slice of, when every reader of that value is such a slice
    whose reader (if any: a slice already rounded has none) leads through views, transposes and
    broadcast gathers to a matmul-family op; else None."""
    cut = defining_op(value)
    if cut is None or cut.name != "tensor.extract_slice":
        return None
    whole = cut.operands[0]
    for use in whole.uses:
        if use.owner.name == "tensor.dim":
            continue
        if use.owner.name != "tensor.extract_slice" or not _feeds_a_matmul(use.owner.results[0]):
            return None
    return whole


def _feeds_a_matmul(value: ir.Value) -> bool:
    while _readers(value) == 1:
        reader = next(use.owner for use in value.uses if use.owner.name != "tensor.dim")
        if reader.name == "tensor.extract":             # in the body of a broadcast gather reading `value`
            reader = reader.parent
            gathered = gather(reader)
            if gathered is None or gathered[0] != value:
                return False
        elif reader.name not in _MOVES:
            return classify(reader) is not None
        value = reader.results[0]
    return _readers(value) == 0


def _source(op) -> ir.Value:
    """What view, transpose or gather `op` moves."""
    return op.operands[0] if op.name in _MOVES else gather(op)[0]


def _remade(op, source: ir.Value) -> ir.Value:
    """View, transpose or gather `op` applied to bf16 `source` instead of its fp32 one."""
    if op.name == "linalg.transpose":
        made = linalg.transpose(source, outs=[empty_like(op.operands[1], ir.BF16Type.get())],
                                permutation=list(op.attributes["permutation"]))
        return made if isinstance(made, ir.Value) else made.results[0]
    if op.name == "linalg.generic":
        return _gathered(op, source)
    return view_on(op, source)


def _gathered(op, source: ir.Value) -> ir.Value:
    """Broadcast gather `op` (broadcasts.gather) reading bf16 `source`: the same indices, a bf16 result."""
    init = op.operands[0]
    bf16 = ir.BF16Type.get()
    made = linalg.GenericOp([with_element(init.type, bf16)], [], [empty_like(init, bf16)], op.attributes["indexing_maps"],
                            op.attributes["iterator_types"])
    old = op.regions[0].blocks[0]
    block = made.regions[0].blocks.append(bf16)
    mapping = {old.arguments[0]: block.arguments[0]}
    with ir.InsertionPoint(block):
        for inner in old.operations:
            operands = [mapping.get(v, v) for v in inner.operands]
            if inner.operation.name == "tensor.extract":
                mapping[inner.results[0]] = tensor.ExtractOp(source, operands[1:]).result
            elif inner.operation.name == "linalg.yield":
                linalg.YieldOp(operands)
            else:
                clone = inner.operation.clone()
                for i, v in enumerate(operands):
                    clone.operands[i] = v
                mapping.update(zip(inner.results, clone.results))
    return made.results[0]
