// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-lower-cpu | FileCheck %s --implicit-check-not=memrefCopy

// GPT-2's q/k/v split: a strided column slice reshaped into heads is a view (lowering/loops/reshapes.py: the
// reshape only splits the last dim), so no copy of the slice is made (once a loop nest, never MLIR's
// element-at-a-time memrefCopy helper); the head permute, a linalg.transpose, becomes a generic that
// reads the slice in place and runs over the cores (an OpenMP loop) when it is big.
func.func @split(%qkv: tensor<16x?x2304xf32>) -> tensor<16x12x?x64xf32> {
  %c1 = arith.constant 1 : index
  %t = tensor.dim %qkv, %c1 : tensor<16x?x2304xf32>
  %s = tensor.extract_slice %qkv[0, 0, 768] [16, %t, 768] [1, 1, 1] : tensor<16x?x2304xf32> to tensor<16x?x768xf32>
  %c16 = arith.constant 16 : i64
  %c12 = arith.constant 12 : i64
  %c64 = arith.constant 64 : i64
  %ti = arith.index_cast %t : index to i64
  %shape = tensor.from_elements %c16, %ti, %c12, %c64 : tensor<4xi64>
  %r = tensor.reshape %s(%shape) : (tensor<16x?x768xf32>, tensor<4xi64>) -> tensor<16x?x12x64xf32>
  %e = tensor.empty(%t) : tensor<16x12x?x64xf32>
  %tr = linalg.transpose ins(%r : tensor<16x?x12x64xf32>) outs(%e : tensor<16x12x?x64xf32>) permutation = [0, 2, 1, 3]
  return %tr : tensor<16x12x?x64xf32>
}

// CHECK-LABEL: llvm.func @split(
// CHECK:         llvm.call @ftuner_kernel_split_0(
// CHECK-NOT:     llvm.call @ftuner_kernel_split_1(
// CHECK-LABEL: llvm.func internal @ftuner_kernel_split_0(
// CHECK:         omp.parallel
// CHECK:           omp.wsloop
