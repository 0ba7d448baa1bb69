// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-generalize-transposes | FileCheck %s

// A transpose becomes a generic whose input map permutes the dims.
func.func @transpose(%x: tensor<?x4x8xf32>) -> tensor<8x?x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4x8xf32>
  %e = tensor.empty(%n) : tensor<8x?x4xf32>
  %t = linalg.transpose ins(%x : tensor<?x4x8xf32>) outs(%e : tensor<8x?x4xf32>) permutation = [2, 0, 1]
  return %t : tensor<8x?x4xf32>
}

// CHECK-DAG:   #[[$IN:.+]] = affine_map<(d0, d1, d2) -> (d1, d2, d0)>
// CHECK-DAG:   #[[$OUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @transpose(
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME:      ins(%{{.+}} : tensor<?x4x8xf32>) outs(%{{.+}} : tensor<8x?x4xf32>)
