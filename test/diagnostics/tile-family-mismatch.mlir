// RUN: not ftuner-opt %s --ftuner-tile 2>&1 | FileCheck %s

// CHECK-NOT: Traceback
// CHECK: tile-family-mismatch.mlir:[[@LINE+2]]:8: error: ftuner.ukernels describes a f32 batch_matmul but the op is a f32 matmul
func.func @f(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul {ftuner.ukernels = {cores = 2 : i64, dtype = "f32", family = "batch_matmul", kc = 32 : i64, lanes = 16 : i64,
                                         mc = 64 : i64, mr = 4 : i64, nc = 64 : i64, nr = 16 : i64}}
      ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
