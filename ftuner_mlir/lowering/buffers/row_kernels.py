"""Each row kernel of a public function becomes a private function right after bufferization, and the
kernels that are the same code are merged at once.

A row kernel is a top-level `scf.if` of a public function: parallel_generics.py's choice between a loop
over the cores and its serial twin, around a row chain (layer norm, softmax) or an elementwise op. A
transformer repeats them in every layer with other buffers and weights, and every later pass
(deallocation, canonicalization, the lowering to loops and to LLVM) walked each copy until outline.py
and merge_functions.py merged them at the end. Outlined here, with every buffer they use (weights too)
as an argument, the copies are one function before those passes run: BERT-base's 120 kernels become
17 functions. After bufferization, not before: on tensors, a call would hide from the bufferization
analysis that a kernel writes a fresh buffer, and give its result a fully dynamic layout (copies
before reshapes).

A kernel's results are buffers it wrote into (every branch yields the same buffer from outside): the
function returns nothing, and the caller reads the buffer it passed. A kernel yielding anything else,
or capturing a value a call cannot pass, stays in place.
"""
from __future__ import annotations

from mlir import ir
from mlir.dialects import memref

from ...ir.walk import defining_op, inside, look_through, public_functions
from ..llvm.merge_functions import merge_identical_functions
from ..llvm.outline import captured, nest, outline

ROW_KERNEL_PREFIX = "ftuner_kernel"
_PASSABLE = (ir.MemRefType, ir.IndexType, ir.IntegerType, ir.FloatType)


def outline_row_kernels(module_op) -> int:
    """Outline the row kernels of every public function, merge the identical ones; returns how many
    functions remain of those outlined."""
    module_block = module_op.regions[0].blocks[0]
    outlined = 0
    for fn in public_functions(module_op):
        name = fn.attributes["sym_name"].value
        for op in list(fn.regions[0].blocks[0].operations):
            if op.operation.name != "scf.if":
                continue
            ops = nest(op)
            written = [_written_buffer(result, op) for result in op.results]
            if any(b is None for b in written) or not all(_passable(v) for v in captured(ops)):
                continue
            _read_written_buffers(op, written)
            outline(op, ops, f"{ROW_KERNEL_PREFIX}_{name}_{outlined}", module_block, cloned=_scalar, returns=False)
            outlined += 1
    return outlined - merge_identical_functions(module_op) if outlined else 0


def _written_buffer(result: ir.Value, kernel) -> ir.Value | None:
    """The buffer from outside `kernel` that every branch yields as `result` (through casts), else None."""
    number = ir.OpResult(result).result_number
    found = set()
    for region in kernel.regions:
        if not region.blocks:
            return None
        body = region.blocks[0]
        yielded = look_through(body.operations[len(body.operations) - 1].operands[number], {"memref.cast"})
        maker = defining_op(yielded)
        if maker is None:                   # a block argument: of the op whose region holds it
            maker = yielded.owner.owner
        if inside(maker, kernel):
            return None                     # made by the kernel itself
        found.add(yielded)
    return found.pop() if len(found) == 1 else None


def _read_written_buffers(kernel, written: list) -> None:
    """Later readers of the kernel's results read the buffers it wrote (cast to the result's type)."""
    with ir.InsertionPoint(kernel), kernel.location:
        for result, buffer in zip(kernel.results, written):
            result.replace_all_uses_with(buffer if buffer.type == result.type else
                                         memref.CastOp(result.type, buffer).result)


def _passable(value) -> bool:
    return _scalar_constant(value) or isinstance(value.type, _PASSABLE)


def _scalar_constant(value) -> bool:
    owner = defining_op(value)
    return owner is not None and owner.name == "arith.constant" and _scalar(value)


def _scalar(value) -> bool:
    """Constants cloned into the kernel (LLVM folds them there): scalars, vectors, splats. A buffer (a
    layer's weight) is passed, so the layers' kernels are the same function."""
    return not isinstance(value.type, (ir.MemRefType, ir.RankedTensorType))
