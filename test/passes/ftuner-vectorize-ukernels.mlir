// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-select-ukernels --ftuner-tile --ftuner-vectorize-ukernels | FileCheck %s

func.func @matmul(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// The body uKernel: the 8x32 accumulator is read once, carried through the reduction loop in a vector,
// and written once; each step is a static 8x1 by 1x32 contraction (no masks). Full-width uKernels have
// their reduction loop unrolled by 4 (then a loop over the last K % 4 steps).
// CHECK-LABEL: func.func private @ftuner_uk_matmul_8x32_f32(
// CHECK-SAME:      %[[A:[^:]+]]: tensor<8x?xf32>, %[[B:[^:]+]]: tensor<?x32xf32>, %[[C:[^:]+]]: tensor<8x32xf32>)
// CHECK-SAME:      attributes {ftuner.ukernel, ftuner.unroll_k}
// CHECK-NOT:     linalg.matmul
// CHECK:         %[[ACC0:.*]] = vector.transfer_read %[[C]]{{.*}} : tensor<8x32xf32>, vector<8x32xf32>
// CHECK:         %[[MAIN:.*]] = scf.for {{.*}} iter_args(%[[IT:.*]] = %[[ACC0]]) -> (vector<8x32xf32>)
// CHECK:           vector.transfer_read {{.*}} : tensor<8x1xf32>, vector<8x1xf32>
// CHECK:           vector.transfer_read {{.*}} : tensor<1x32xf32>, vector<1x32xf32>
// CHECK-NOT:       vector.mask
// CHECK:           %[[S1:.*]] = vector.contract {{.*}} %[[IT]] : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK:           %[[S2:.*]] = vector.contract {{.*}} %[[S1]] :
// CHECK:           %[[S3:.*]] = vector.contract {{.*}} %[[S2]] :
// CHECK:           %[[S4:.*]] = vector.contract {{.*}} %[[S3]] :
// CHECK-NEXT:      scf.yield %[[S4]]
// CHECK:         %[[ACC:.*]] = scf.for {{.*}} iter_args(%[[REST:.*]] = %[[MAIN]]) -> (vector<8x32xf32>)
// CHECK:           %[[LAST:.*]] = vector.contract {{.*}} %[[REST]] :
// CHECK-NEXT:      scf.yield %[[LAST]]
// CHECK:         vector.transfer_write %[[ACC]], %[[C]]
// CHECK-NOT:     linalg.matmul
// CHECK:         return

// A row-remainder uKernel is vectorized the same way at its own static size. (Columns past the last
// 32-wide strip go to the masked tails, vector code from the start: no 16-wide uKernel.)
// CHECK-LABEL: func.func private @ftuner_uk_matmul_1x32_f32(
// CHECK-SAME:      attributes {ftuner.ukernel, ftuner.unroll_k} {
// CHECK:         vector.contract {{.*}} : vector<1x1xf32>, vector<1x32xf32> into vector<1x32xf32>
// CHECK:         return
// CHECK-NOT:     func.func private @ftuner_uk_matmul_{{[0-9]+}}x16_f32(

// With a zero-filled init, the overwriting uKernels start their accumulators at zero and never read C.
func.func @zero_init(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%init : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
// CHECK-LABEL: func.func private @ftuner_uk_matmul_8x32_z_f32(
// CHECK-SAME:      %{{[^:]+}}: tensor<8x?xf32>, %{{[^:]+}}: tensor<?x32xf32>, %[[ZC:[^:]+]]: tensor<8x32xf32>)
// CHECK-NOT:     linalg.fill
// CHECK-NOT:     vector.transfer_read %[[ZC]]
// CHECK:         %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<8x32xf32>
// CHECK:         %[[ZMAIN:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (vector<8x32xf32>)
// CHECK:           vector.contract
// CHECK:         %[[ZACC:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[ZMAIN]]) -> (vector<8x32xf32>)
// CHECK:         vector.transfer_write %[[ZACC]], %[[ZC]]
// CHECK-NOT:     vector.transfer_read %[[ZC]]
// CHECK:         return
