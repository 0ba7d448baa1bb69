// RUN: ftuner-opt %s --split-input-file --target=x86-avx512 --ftuner-select-ukernels --ftuner-tile | FileCheck %s

// A constant B stored K x N (GPT-2's Conv1D weights) is packed at compile time into 32-wide micro-panels
// [ceil(N/32), K, 32] (the columns past N zero); the matmul calls the dispatch that reads them in place:
// no pack function, no per-call copy or transpose of the weight, the original constant gone.
// w = [[1, 2, 3], [4, 5, 6]] (K = 2, N = 3): panel row k holds w[k, 0..2] then 29 zeros (232 hex digits).
func.func @stored_k_by_n(%x: tensor<?x2xf32>, %y: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %r = linalg.matmul ins(%x, %w : tensor<?x2xf32>, tensor<2x3xf32>) outs(%y : tensor<?x3xf32>) -> tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}

// CHECK-LABEL: func.func @stored_k_by_n(
// CHECK-NOT:     dense<
// CHECK:         %[[P:.*]] = arith.constant dense_resource<ftuner_panels_n32> : tensor<1x2x32xf32>
// CHECK:         %[[PC:.*]] = tensor.cast %[[P]] : tensor<1x2x32xf32> to tensor<?x?x32xf32>
// CHECK:         call @ftuner_dispatch_matmul_transpose_b_8x32_{{.*}}_pw_f32(%{{.*}}, %[[PC]], %{{.*}}) : (tensor<?x?xf32>, tensor<?x?x32xf32>, tensor<?x?xf32>)
// CHECK-NOT:     linalg.matmul
// CHECK-LABEL: func.func private @ftuner_dispatch_matmul_transpose_b_8x32_{{.*}}_pw_f32(
// CHECK-SAME:    %arg1: tensor<?x?x32xf32>
// CHECK:         %[[FIRST:.*]] = arith.divui %{{.*}}, %c32{{.*}} : index
// CHECK:         %[[BLK:.*]] = tensor.extract_slice %arg1[%[[FIRST]], %{{.*}}, 0] [%{{.*}}, %{{.*}}, 32] [1, 1, 1] : tensor<?x?x32xf32> to tensor<?x?x32xf32>
// CHECK-NOT:     ftuner_pack
// CHECK:         func.call @ftuner_rows_8_n32_pb_f32(%{{.*}}, %[[BLK]],
// CHECK-NOT:   func.func private @ftuner_pack
// CHECK:       ftuner_panels_n32: "0x04000000
// CHECK-SAME:    0000803F00000040000040400000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
// CHECK-SAME:    000080400000A0400000C0400000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"

// -----

// A constant N x K weight read through linalg.transpose (torch-mlir's Linear) gets the same panels:
// w = [[1, 2], [3, 4], [5, 6]] is N x K = 3 x 2, so panel row k holds column k of w.
func.func @stored_n_by_k(%x: tensor<?x2xf32>, %y: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %t = linalg.transpose ins(%w : tensor<3x2xf32>) outs(%e : tensor<2x3xf32>) permutation = [1, 0]
  %r = linalg.matmul ins(%x, %t : tensor<?x2xf32>, tensor<2x3xf32>) outs(%y : tensor<?x3xf32>) -> tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}

// CHECK-LABEL: func.func @stored_n_by_k(
// CHECK-NOT:     linalg.transpose
// CHECK:         arith.constant dense_resource<ftuner_panels_n32> : tensor<1x2x32xf32>
// CHECK:         call @ftuner_dispatch_matmul_transpose_b_8x32_{{.*}}_pw_f32(
// CHECK-NOT:   func.func private @ftuner_pack
// CHECK:       ftuner_panels_n32: "0x04000000
// CHECK-SAME:    0000803F000040400000A0400000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
// CHECK-SAME:    00000040000080400000C0400000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"

// -----

// B an argument: packed per call, as before (the _pw dispatch is only for constants).
func.func @weight_argument(%x: tensor<?x2xf32>, %w: tensor<2x3xf32>, %y: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %r = linalg.matmul ins(%x, %w : tensor<?x2xf32>, tensor<2x3xf32>) outs(%y : tensor<?x3xf32>) -> tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}

// CHECK-LABEL: func.func @weight_argument(
// CHECK:         call @ftuner_dispatch_matmul_8x32_{{.*}}_p2_f32(
// CHECK-NOT:     _pw
// CHECK:       func.func private @ftuner_pack_b_n32_f32(
