// RUN: ftuner-opt %s --ftuner-select-ukernels | FileCheck %s
// RUN: ftuner-opt %s --target=x86-avx2 --ftuner-select-ukernels | FileCheck %s
// RUN: not ftuner-opt %s --target=x86-avx512 --ftuner-select-ukernels 2>&1 | FileCheck %s --check-prefix=CONFLICT

// The module names its target: the passes use it without --target (whatever the host is), agree with
// a --target naming the same one, and refuse one naming another.
// CHECK-LABEL: func.func @matmul(
// CHECK:         linalg.matmul
// CHECK-SAME:      lanes = 8 : i64
// CHECK-SAME:      mr = 6 : i64
// CHECK-SAME:      nr = 16 : i64
// CONFLICT: module-target.mlir:[[# @LINE + 1]]:1: error: the module's ftuner.target "x86-avx2" conflicts with --target=x86-avx512
module attributes {ftuner.target = "x86-avx2"} {
  func.func @matmul(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
    %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
    return %r : tensor<?x?xf32>
  }
}
