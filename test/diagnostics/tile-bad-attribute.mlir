// RUN: not ftuner-opt %s --ftuner-tile 2>&1 | FileCheck %s

// The cache block must be a whole number of register tiles.
// CHECK-NOT: Traceback
// CHECK: tile-bad-attribute.mlir:[[@LINE+2]]:8: error: cache block 66x64 must be a multiple of the register tile 4x16
func.func @f(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul {ftuner.ukernels = {cores = 2 : i64, dtype = "f32", family = "matmul", kc = 32 : i64, lanes = 16 : i64,
                                         mc = 66 : i64, mr = 4 : i64, nc = 64 : i64, nr = 16 : i64}}
      ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
