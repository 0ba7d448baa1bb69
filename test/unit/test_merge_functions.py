"""lowering/merge_functions: private functions that print the same but for their names become one; the
calls to the copies call the first; a difference anywhere (an op, a constant, an attribute, a type)
keeps both; public functions are never merged; callers that become identical merge in a later round."""
from mlir import ir

from ftuner_mlir.ir.walk import functions
from ftuner_mlir.lowering.llvm.merge_functions import merge_identical_functions

SOURCE = """
func.func private @scale_a(%x: f32) -> f32 {
  %c = arith.constant 2.0 : f32
  %y = arith.mulf %x, %c : f32
  return %y : f32
}
func.func private @scale_b(%x: f32) -> f32 {
  %c = arith.constant 2.0 : f32
  %y = arith.mulf %x, %c : f32
  return %y : f32
}
func.func private @scale_other_constant(%x: f32) -> f32 {
  %c = arith.constant 3.0 : f32
  %y = arith.mulf %x, %c : f32
  return %y : f32
}
func.func private @scale_other_attribute(%x: f32) -> f32 attributes {ftuner.epilogue = 1 : i64} {
  %c = arith.constant 2.0 : f32
  %y = arith.mulf %x, %c : f32
  return %y : f32
}
func.func private @caller_a(%x: f32) -> f32 {
  %y = call @scale_a(%x) : (f32) -> f32
  return %y : f32
}
func.func private @caller_b(%x: f32) -> f32 {
  %y = call @scale_b(%x) : (f32) -> f32
  return %y : f32
}
func.func @public_a(%x: f32) -> f32 {
  %y = call @caller_a(%x) : (f32) -> f32
  return %y : f32
}
func.func @public_b(%x: f32) -> f32 {
  %y = call @caller_b(%x) : (f32) -> f32
  %z = call @scale_other_constant(%y) : (f32) -> f32
  %w = call @scale_other_attribute(%z) : (f32) -> f32
  return %w : f32
}
"""


def _merged():
    context = ir.Context()
    context.allow_unregistered_dialects = True
    module = ir.Module.parse(SOURCE, context)
    with context:
        removed = merge_identical_functions(module.operation)
        assert module.operation.verify()
        names = [ir.StringAttr(fn.attributes["sym_name"]).value for fn in functions(module.operation)]
        text = str(module)
    return removed, names, text


def test_identical_functions_and_then_their_callers_merge():
    removed, names, text = _merged()
    assert removed == 2                                          # scale_b, then caller_b
    assert names == ["scale_a", "scale_other_constant", "scale_other_attribute", "caller_a",
                     "public_a", "public_b"]
    assert "@scale_b" not in text and "@caller_b" not in text
    assert text.count("call @caller_a(") == 2                     # public_b now calls caller_a
    assert text.count("call @scale_a(") == 1                      # from caller_a, the one left


def test_public_functions_stay_though_identical():
    context = ir.Context()
    module = ir.Module.parse("""
      func.func @f(%x: f32) -> f32 { return %x : f32 }
      func.func @g(%x: f32) -> f32 { return %x : f32 }
    """, context)
    with context:
        assert merge_identical_functions(module.operation) == 0
        assert len(functions(module.operation)) == 2


def test_a_chain_merges_level_by_level_and_other_types_stay():
    """Copies three calls deep merge one level a round (each round prints again only the callers it
    renamed); a function alone with its type is left as it is."""
    chain = "\n".join(f"""
      func.func private @leaf_{s}(%x: f32) -> f32 {{ %y = arith.addf %x, %x : f32
        return %y : f32 }}
      func.func private @mid_{s}(%x: f32) -> f32 {{ %y = call @leaf_{s}(%x) : (f32) -> f32
        return %y : f32 }}
      func.func private @top_{s}(%x: f32) -> f32 {{ %y = call @mid_{s}(%x) : (f32) -> f32
        return %y : f32 }}
      func.func @entry_{s}(%x: f32) -> f32 {{ %y = call @top_{s}(%x) : (f32) -> f32
        return %y : f32 }}""" for s in "ab")
    context = ir.Context()
    module = ir.Module.parse(chain + """
      func.func private @alone(%x: f64) -> f64 { return %x : f64 }
      func.func @use_alone(%x: f64) -> f64 { %y = call @alone(%x) : (f64) -> f64
        return %y : f64 }""", context)
    with context:
        assert merge_identical_functions(module.operation) == 3
        assert module.operation.verify()
        names = [ir.StringAttr(fn.attributes["sym_name"]).value for fn in functions(module.operation)]
        text = str(module)
    assert names == ["leaf_a", "mid_a", "top_a", "entry_a", "entry_b", "alone", "use_alone"]
    assert text.count("call @top_a(") == 2 and "_b(" not in text.replace("@entry_b(", "")
