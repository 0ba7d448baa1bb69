// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-check-llvm-dialect --split-input-file --verify-diagnostics

// What the LLVM and OpenMP dialects hold passes as it is.
llvm.func @done(%x: f32) -> f32 {
  llvm.return %x : f32
}

// -----

// An op no conversion lowered is a located error naming it; the casts a partial conversion leaves
// behind are symptoms, not named while something else is left.
llvm.func @left(%x: f32) -> f32 {
  // expected-error @+1 {{'math.erf' was not lowered to the LLVM dialect: ftuner-lower-cpu has no lowering for it}}
  %y = math.erf %x : f32
  %z = builtin.unrealized_conversion_cast %y : f32 to f32
  llvm.return %z : f32
}

// -----

// The first op left (in walk order) is named, with how many more there are.
// expected-error @+1 {{'func.func' was not lowered to the LLVM dialect: ftuner-lower-cpu has no lowering for it (2 more ops are left too)}}
func.func @two(%x: f32) -> f32 {
  %y = math.erf %x : f32
  return %y : f32
}
