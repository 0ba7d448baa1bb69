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

// CHECK-LABEL: func.func @iota(
// CHECK-NOT:     linalg.generic
// CHECK:         %[[C:.+]] = arith.constant dense_resource<ftuner_folded> : tensor<2x3xi64>
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[C]]
// CHECK-LABEL: func.func @reads_an_argument(
// CHECK:         linalg.generic
// CHECK:           arith.addi
// The folded values, i * j as little-endian i64 after the blob's alignment: 0 0 0 / 0 1 2.
// CHECK:         ftuner_folded: "0x08000000000000000000000000000000000000000000000000000000000000000000000001000000000000000200000000000000"
