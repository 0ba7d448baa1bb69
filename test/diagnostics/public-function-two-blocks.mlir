// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-cpu-pipeline --verify-diagnostics

// Unstructured control flow in a public function is refused with a located error, not a traceback.
// expected-error @+1 {{public function has 2 blocks; only single-block bodies}}
func.func @f(%a: tensor<?xf32>) -> tensor<?xf32> {
  cf.br ^bb1
^bb1:
  return %a : tensor<?xf32>
}
