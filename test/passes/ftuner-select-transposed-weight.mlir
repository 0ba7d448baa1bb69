// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-select-ukernels | FileCheck %s

// torch-mlir's Linear: the weight [N, K] is transposed, then multiplied. The matmul reads the weight
// as N x K instead (the transpose_b family): no copy of the weight per call.
// CHECK-LABEL: func.func @linear(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<?x64xf32>, %[[W:[a-z0-9]+]]: tensor<32x64xf32>
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.matmul indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}, #{{[a-z0-9]+}}]
// CHECK-SAME:      family = "matmul_transpose_b"
// CHECK-SAME:      ins(%[[X]], %[[W]] : tensor<?x64xf32>, tensor<32x64xf32>)
// CHECK-NOT:     linalg.transpose
func.func @linear(%x: tensor<?x64xf32>, %w: tensor<32x64xf32>) -> tensor<?x32xf32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x64xf32>
  %t0 = tensor.empty() : tensor<64x32xf32>
  %wt = linalg.transpose ins(%w : tensor<32x64xf32>) outs(%t0 : tensor<64x32xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m) : tensor<?x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x32xf32>) -> tensor<?x32xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<?x64xf32>, tensor<64x32xf32>) outs(%init : tensor<?x32xf32>) -> tensor<?x32xf32>
  return %r : tensor<?x32xf32>
}

// A transpose someone else also reads stays; the matmul still reads the weight directly.
// CHECK-LABEL: func.func @shared_transpose(
// CHECK:         %[[T:.+]] = linalg.transpose
// CHECK:         linalg.matmul indexing_maps
// CHECK-SAME:      family = "matmul_transpose_b"
// CHECK:         return %{{.+}}, %[[T]]
func.func @shared_transpose(%x: tensor<?x64xf32>, %w: tensor<32x64xf32>) -> (tensor<?x32xf32>, tensor<64x32xf32>) {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x64xf32>
  %t0 = tensor.empty() : tensor<64x32xf32>
  %wt = linalg.transpose ins(%w : tensor<32x64xf32>) outs(%t0 : tensor<64x32xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m) : tensor<?x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x32xf32>) -> tensor<?x32xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<?x64xf32>, tensor<64x32xf32>) outs(%init : tensor<?x32xf32>) -> tensor<?x32xf32>
  return %r, %wt : tensor<?x32xf32>, tensor<64x32xf32>
}
