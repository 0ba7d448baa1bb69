// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-recompute-cheap-producers | FileCheck %s

// torch-mlir's layer-norm variance: x widened to f64 is read by the mean's sum and (twice) by its square.
// Each extra use gets a clone of the cast, so the fusion that follows folds the cast into both
// reductions and no f64 copy of x is stored.
func.func @ln(%x: tensor<4x?x8xf32>) -> tensor<4x?x1xf64> {
  %c1 = arith.constant 1 : index
  %t = tensor.dim %x, %c1 : tensor<4x?x8xf32>
  %e = tensor.empty(%t) : tensor<4x?x8xf64>
  %w = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<4x?x8xf32>) outs(%e : tensor<4x?x8xf64>) {
  ^bb0(%in: f32, %out: f64):
    %v = arith.extf %in : f32 to f64
    linalg.yield %v : f64
  } -> tensor<4x?x8xf64>
  %z = arith.constant 0.0 : f64
  %e1 = tensor.empty(%t) : tensor<4x?x1xf64>
  %f = linalg.fill ins(%z : f64) outs(%e1 : tensor<4x?x1xf64>) -> tensor<4x?x1xf64>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%w : tensor<4x?x8xf64>) outs(%f : tensor<4x?x1xf64>) {
  ^bb0(%in: f64, %out: f64):
    %v = arith.addf %in, %out : f64
    linalg.yield %v : f64
  } -> tensor<4x?x1xf64>
  %sq = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%w, %w : tensor<4x?x8xf64>, tensor<4x?x8xf64>) outs(%e : tensor<4x?x8xf64>) {
  ^bb0(%a: f64, %b: f64, %out: f64):
    %v = arith.mulf %a, %b : f64
    linalg.yield %v : f64
  } -> tensor<4x?x8xf64>
  %s2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sq : tensor<4x?x8xf64>) outs(%s : tensor<4x?x1xf64>) {
  ^bb0(%in: f64, %out: f64):
    %v = arith.addf %in, %out : f64
    linalg.yield %v : f64
  } -> tensor<4x?x1xf64>
  return %s2 : tensor<4x?x1xf64>
}

// A producer reading an i1 mask is left materialized: the mask read would keep each consumer's loop scalar.
func.func @masked(%m: tensor<?xi1>, %x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%m, %x : tensor<?xi1>, tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%b: i1, %v: f32, %out: f32):
    %r = arith.select %b, %ninf, %v : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %e1 = tensor.empty(%n) : tensor<?xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%s : tensor<?xf32>) outs(%e1 : tensor<?xf32>) {
  ^bb0(%v: f32, %out: f32):
    %r = arith.addf %v, %v : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %e2 = tensor.empty(%n) : tensor<?xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%s : tensor<?xf32>) outs(%e2 : tensor<?xf32>) {
  ^bb0(%v: f32, %out: f32):
    %r = arith.mulf %v, %v : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %a, %p : tensor<?xf32>, tensor<?xf32>
}

// CHECK-LABEL: func.func @ln(
// CHECK-SAME:      %[[X:[^:]+]]: tensor<4x?x8xf32>
// CHECK-COUNT-3: linalg.generic {{.*}} ins(%[[X]] : tensor<4x?x8xf32>) outs(%{{.*}} : tensor<4x?x8xf64>)
// CHECK-NOT:     ins(%[[X]] : tensor<4x?x8xf32>) outs(%{{.*}} : tensor<4x?x8xf64>)
// CHECK-LABEL:   func.func @masked(
// CHECK-COUNT-1: arith.select
// CHECK-NOT:     arith.select
// CHECK:         return
