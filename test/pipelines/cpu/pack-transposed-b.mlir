// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-select-ukernels --ftuner-tile --ftuner-vectorize-ukernels | FileCheck %s

// B stored N x K: each cache block of B is packed into 32-wide micro-panels [panels, kk, 32]; full
// 16x16 tiles go through a transpose uKernel into a panel, the edges (the last kk % 16 rows of every
// panel, the last panel's columns) through plain transposes; the row strips read one panel per uKernel.
func.func @dense(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// CHECK-LABEL: func.func private @ftuner_dispatch_matmul_transpose_b_
// CHECK:         %[[BT:.*]] = tensor.extract_slice %arg1
// CHECK:         %[[E:.*]] = tensor.empty({{.*}}) : tensor<?x?x32xf32>
// CHECK:         func.call @ftuner_pack_bt_16_n32_f32(%[[BT]], %[[E]]) : (tensor<?x?xf32>, tensor<?x?x32xf32>)
// CHECK-LABEL: func.func private @ftuner_rows_8_n32_pb_f32(
// CHECK-SAME:    %arg1: tensor<?x?x32xf32>
// CHECK:         tensor.extract_slice %arg1[{{.*}}, 0, {{.*}}] [1, %{{.*}}, 32] [1, 1, 1] : tensor<?x?x32xf32> to tensor<?x32xf32>
// CHECK:         func.call @ftuner_uk_matmul_8x32_f32(
// CHECK:         tensor.extract_slice %arg1[{{.*}}, 0, {{.*}}] [1, %{{.*}}, %{{.*}}] [1, 1, 1] : tensor<?x?x32xf32> to tensor<?x?xf32>
// CHECK:         func.call @ftuner_uk_matmul_8xm16_f32(
// CHECK:         func.call @ftuner_uk_matmul_8xm32_f32(
// CHECK-LABEL: func.func private @ftuner_pack_bt_16_n32_f32(
// CHECK:         scf.for
// CHECK:           scf.for {{.*}} step %c16
// CHECK:             func.call @ftuner_uk_transpose_16x16_f32(
// CHECK:             tensor.insert_slice {{.*}} [1, 16, 16] [1, 1, 1] : tensor<16x16xf32> into tensor<?x?x32xf32>
// CHECK:         scf.for
// CHECK:           linalg.transpose
// CHECK:         scf.if
// CHECK:           linalg.transpose
// CHECK-LABEL: func.func private @ftuner_uk_transpose_16x16_f32(
// CHECK-NOT:     linalg.transpose
// CHECK:         vector.transfer_read {{.*}} : tensor<16x16xf32>, vector<16x16xf32>
// CHECK:         vector.transfer_write {{.*}} : vector<16x16xf32>, tensor<16x16xf32>
