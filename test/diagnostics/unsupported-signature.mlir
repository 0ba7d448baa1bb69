// RUN: not ftuner-opt %s --ftuner-cpu-pipeline 2>&1 | FileCheck %s

// Public functions take and return ranked tensors; a scalar argument is rejected with its location.
// CHECK-NOT: Traceback
// CHECK: unsupported-signature.mlir:[[@LINE+1]]:1: error: public function argument #1 has type f32; only ranked tensors (and memref arguments) are supported
func.func @scale(%a: tensor<?xf32>, %s: f32) -> tensor<?xf32> {
  return %a : tensor<?xf32>
}
