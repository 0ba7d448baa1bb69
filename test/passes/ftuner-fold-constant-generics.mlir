// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-fold-constant-generics | FileCheck %s

// GPT-2's position iota over its static batch reads no input: evaluated once, at compile time, into a
// constant. A generic that reads an argument stays code.
func.func @iota() -> tensor<2x3xi64> {
  %e = tensor.empty() : tensor<2x3xi64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<2x3xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = arith.muli %i, %j : index
    %v = arith.index_cast %k : index to i64
    linalg.yield %v : i64
  } -> tensor<2x3xi64>
  return %r : tensor<2x3xi64>
}

func.func @reads_an_argument(%x: tensor<2x3xi64>) -> tensor<2x3xi64> {
  %e = tensor.empty() : tensor<2x3xi64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x3xi64>) outs(%e : tensor<2x3xi64>) {
  ^bb0(%in: i64, %out: i64):
    %v = arith.addi %in, %in : i64
    linalg.yield %v : i64
  } -> tensor<2x3xi64>
  return %r : tensor<2x3xi64>
}

// A batch norm's scale per channel, as torch-mlir writes it: 1 / sqrt(var + eps), the root guarded by
// an assert that it is not zero. Every value passes the assert: both generics fold (sqrt and / are
// correctly rounded in numpy as in the code) and the assert goes with them. Where the assert fails on
// the constants (a zero variance with eps 0), the generic stays code, to fail at run time.
func.func @batch_norm_scale() -> tensor<4xf32> {
  %var = arith.constant dense<[4.0, 0.25, 2.0, 1.0e-30]> : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %root = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%var : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.sqrt %in : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %scale = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%root : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %nonzero = arith.cmpf one, %in, %zero : f32
    cf.assert %nonzero, "unimplemented: tensor with zero element"
    %r = arith.divf %one, %in : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %scale : tensor<4xf32>
}

func.func @failing_assert_stays() -> tensor<2xf32> {
  %var = arith.constant dense<[4.0, 0.0]> : tensor<2xf32>
  %e = tensor.empty() : tensor<2xf32>
  %zero = arith.constant 0.0 : f32
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%var : tensor<2xf32>) outs(%e : tensor<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %nonzero = arith.cmpf one, %in, %zero : f32
    cf.assert %nonzero, "unimplemented: tensor with zero element"
    linalg.yield %in : f32
  } -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// CHECK-LABEL: func.func @iota(
// CHECK-NOT:     linalg.generic
// CHECK:         %[[C:.+]] = arith.constant dense_resource<ftuner_folded> : tensor<2x3xi64>
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[C]]
// CHECK-LABEL: func.func @reads_an_argument(
// CHECK:         linalg.generic
// CHECK:           arith.addi
// CHECK-LABEL: func.func @batch_norm_scale(
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     cf.assert
// CHECK:         arith.constant dense_resource<ftuner_folded_1> : tensor<4xf32>
// CHECK:         %[[S:.+]] = arith.constant dense_resource<ftuner_folded_2> : tensor<4xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[S]]
// CHECK-LABEL: func.func @failing_assert_stays(
// CHECK:         linalg.generic
// CHECK:           cf.assert
// The folded values, i * j as little-endian i64 after the blob's alignment: 0 0 0 / 0 1 2.
// CHECK:         ftuner_folded: "0x08000000000000000000000000000000000000000000000000000000000000000000000001000000000000000200000000000000"
// The scale (the root, ftuner_folded_1, is left for canonicalization to drop): 1 / sqrt(var) as f32:
// 0.5, 2, 0.70710677, 1e15, little-endian after the blob's alignment.
// CHECK:         ftuner_folded_2: "0x040000000000003F00000040F304353FA95F6358"
