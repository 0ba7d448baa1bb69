// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-cpu-pipeline --verify-diagnostics

// An op no CPU lowering handles must not reach the "LLVM dialect" output silently: the end state of
// the pipeline is checked, and the op is named at its location (not the casts it leaves behind).
func.func @sm(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %a, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  // expected-error @+1 {{'linalg.softmax' was not lowered to the LLVM dialect: ftuner-lower-cpu has no lowering for it}}
  %r = linalg.softmax dimension(1) ins(%a : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
