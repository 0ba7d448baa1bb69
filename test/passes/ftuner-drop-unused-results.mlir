// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-drop-unused-results | FileCheck %s

// torch-mlir's softmax max (aten.max.dim): the row maximum and its argmax in one generic, the argmax
// never read. The argmax result, its output and its index arithmetic go (its fill is left to canonicalize);
// the max stays.
func.func @unused_argmax(%x: tensor<4x?xf32>) -> tensor<4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %c0_i64 = arith.constant 0 : i64
  %e1 = tensor.empty() : tensor<4xi64>
  %i = linalg.fill ins(%c0_i64 : i64) outs(%e1 : tensor<4xi64>) -> tensor<4xi64>
  %e2 = tensor.empty() : tensor<4xf32>
  %m = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x?xf32>) outs(%m, %i : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%in: f32, %out: f32, %out_1: i64):
    %0 = linalg.index 1 : index
    %1 = arith.index_cast %0 : index to i64
    %2 = arith.maximumf %in, %out : f32
    %3 = arith.cmpf ogt, %in, %out : f32
    %4 = arith.select %3, %1, %out_1 : i64
    linalg.yield %2, %4 : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  return %r#0 : tensor<4xf32>
}

// The argmax read by the caller: both results stay.
func.func @used_argmax(%x: tensor<4x?xf32>) -> (tensor<4xf32>, tensor<4xi64>) {
  %ninf = arith.constant 0xFF800000 : f32
  %c0_i64 = arith.constant 0 : i64
  %e1 = tensor.empty() : tensor<4xi64>
  %i = linalg.fill ins(%c0_i64 : i64) outs(%e1 : tensor<4xi64>) -> tensor<4xi64>
  %e2 = tensor.empty() : tensor<4xf32>
  %m = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x?xf32>) outs(%m, %i : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%in: f32, %out: f32, %out_1: i64):
    %0 = linalg.index 1 : index
    %1 = arith.index_cast %0 : index to i64
    %2 = arith.maximumf %in, %out : f32
    %3 = arith.cmpf ogt, %in, %out : f32
    %4 = arith.select %3, %1, %out_1 : i64
    linalg.yield %2, %4 : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xi64>
}

// An unused result whose running value the kept result reads: nothing can go.
func.func @unused_but_read(%x: tensor<4x?xf32>) -> tensor<4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %b = linalg.fill ins(%z : f32) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x?xf32>) outs(%a, %b : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%in: f32, %sum: f32, %count: f32):
    %0 = arith.addf %in, %count : f32
    %1 = arith.addf %sum, %0 : f32
    %2 = arith.addf %count, %in : f32
    linalg.yield %1, %2 : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  return %r#0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @unused_argmax(
// CHECK:         %[[R:.+]] = linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "reduction"]} ins(%{{.+}} : tensor<4x?xf32>) outs(%{{.+}} : tensor<4xf32>) {
// CHECK-NEXT:    ^bb0(%[[IN:.+]]: f32, %[[OUT:.+]]: f32):
// CHECK-NEXT:      %[[M:.+]] = arith.maximumf %[[IN]], %[[OUT]] : f32
// CHECK-NEXT:      linalg.yield %[[M]] : f32
// CHECK-NEXT:    } -> tensor<4xf32>
// CHECK-NOT:     linalg.index
// CHECK:         return %[[R]] : tensor<4xf32>
// CHECK-LABEL: func.func @used_argmax(
// CHECK:         linalg.generic
// CHECK-SAME:      outs(%{{.+}}, %{{.+}} : tensor<4xf32>, tensor<4xi64>)
// CHECK:           arith.select
// CHECK:           linalg.yield %{{.+}}, %{{.+}} : f32, i64
// CHECK-LABEL: func.func @unused_but_read(
// CHECK:         linalg.generic
// CHECK-SAME:      outs(%{{.+}}, %{{.+}} : tensor<4xf32>, tensor<4xf32>)
// CHECK:           linalg.yield %{{.+}}, %{{.+}} : f32, f32
