"""ir/walk: ops_where and ops_named find what walk() finds, in the same pre-order, without the op they
start from; a name set matches any of its names. ancestor_in and inside climb to the top op safely."""
from mlir import ir

from ftuner_mlir.ir.walk import ancestor_in, functions, inside, ops_named, ops_where, walk

SOURCE = """
func.func @f(%x: f32, %n: index, %cond: i1) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> f32 {
    %y = arith.addf %acc, %x : f32
    %z = scf.if %cond -> f32 {
      %w = arith.mulf %y, %y : f32
      scf.yield %w : f32
    } else {
      scf.yield %y : f32
    }
    scf.yield %z : f32
  }
  %s = arith.addf %r, %x : f32
  return %s : f32
}
"""


def test_same_ops_in_the_same_order_as_walk():
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(SOURCE)
        fn = functions(module.operation)[0]
        expected = [op.operation.name for op in walk(fn)]
        assert [op.name for op in ops_where(fn, lambda op: True)] == expected
        assert expected[:3] == ["arith.constant", "arith.constant", "scf.for"]
        assert [op.name for op in ops_named(fn, "arith.addf")] == ["arith.addf", "arith.addf"]
        found = ops_named(module.operation, ("arith.mulf", "scf.if", "func.func"))
        assert [op.name for op in found] == ["func.func", "scf.if", "arith.mulf"]
        assert ops_named(fn, "func.func") == []          # not the op the walk starts from
        assert ops_named(fn, "memref.copy") == []


def test_walk_is_pre_order_over_views_without_its_start():
    from mlir.dialects import arith, scf
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(SOURCE)
        fn = functions(module.operation)[0]
        found = walk(fn)
        assert [op.operation.name for op in found] == [
            "arith.constant", "arith.constant", "scf.for", "arith.addf", "scf.if", "arith.mulf", "scf.yield",
            "scf.yield", "scf.yield", "arith.addf", "func.return"]
        assert isinstance(found[0], arith.ConstantOp) and isinstance(found[2], scf.ForOp)
        assert [op.operation.name for op in walk(module.operation)][0] == "func.func"


def test_ancestor_in_and_inside_climb_to_the_top_op():
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(SOURCE + "func.func @g() {\n  return\n}\n")
        fn, other = functions(module.operation)
        body = fn.regions[0].blocks[0]
        loop = ops_named(fn, "scf.for")[0]
        branch, mulf = ops_named(fn, "scf.if")[0], ops_named(fn, "arith.mulf")[0]
        assert ancestor_in(mulf, body) == loop.operation
        assert ancestor_in(loop, body) == loop.operation
        # not inside the block: the climb reaches the module (whose block MLIR asserts on) and stops
        assert ancestor_in(mulf, other.regions[0].blocks[0]) is None
        assert ancestor_in(module.operation, body) is None
        assert inside(mulf, branch) and inside(mulf, fn) and inside(branch, branch)
        assert not inside(loop, branch) and not inside(mulf, other)
