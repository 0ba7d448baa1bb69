// RUN: ftuner-opt %s --ftuner-cpu-pipeline --verify-diagnostics

// Public functions take and return ranked tensors; a scalar argument is rejected with its location.
// expected-error @+1 {{public function argument #1 has type f32; only ranked tensors (and memref arguments) are supported}}
func.func @scale(%a: tensor<?xf32>, %s: f32) -> tensor<?xf32> {
  return %a : tensor<?xf32>
}
