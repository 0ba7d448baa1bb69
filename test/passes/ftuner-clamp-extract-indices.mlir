// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-clamp-extract-indices | FileCheck %s

// An embedding lookup reads table[ids[i], j]: the id comes from data, and the asserts that guard it
// are reported after the call, so the read is clamped into [0, 4] first. Constant indices stay.
func.func @lookup(%table: tensor<5x3xf32>, %ids: tensor<?xi64>) -> tensor<?x3xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %ids, %c0 : tensor<?xi64>
  %e = tensor.empty(%n) : tensor<?x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<?xi64>) outs(%e : tensor<?x3xf32>) {
  ^bb0(%id: i64, %out: f32):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 1 : index
    %v = tensor.extract %table[%row, %col] : tensor<5x3xf32>
    %w = tensor.extract %table[%c0, %c0] : tensor<5x3xf32>
    %s = arith.addf %v, %w : f32
    linalg.yield %s : f32
  } -> tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}

// CHECK-LABEL: func.func @lookup(
// CHECK:         ^bb0(%[[ID:[^:]+]]: i64
// CHECK:           %[[ROW:.+]] = arith.index_cast %[[ID]] : i64 to index
// CHECK:           %[[COL:.+]] = linalg.index 1 : index
// CHECK-DAG:       %[[LOW:.+]] = arith.maxsi %[[ROW]], %{{.+}} : index
// CHECK-DAG:       %[[R:.+]] = arith.minsi %{{.+}}, %{{.+}} : index
// CHECK:           tensor.extract %{{.+}}[%[[R]], %{{.+}}] : tensor<5x3xf32>
