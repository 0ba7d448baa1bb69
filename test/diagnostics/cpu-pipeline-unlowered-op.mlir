// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-cpu-pipeline --verify-diagnostics

// An op no CPU lowering handles must not reach the "LLVM dialect" output silently: the end state of
// the pipeline is checked, and the op is named at its location (not the casts it leaves behind).
// (complex numbers: the pipeline has no complex-to-LLVM stage)
func.func @magnitude(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]} ins(%a, %b : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    // expected-error @+1 {{'complex.create' was not lowered to the LLVM dialect: ftuner-lower-cpu has no lowering for it}}
    %z = complex.create %x, %y : complex<f32>
    %m = complex.abs %z : complex<f32>
    linalg.yield %m : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}
