// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-select-ukernels --ftuner-tile | FileCheck %s

// B stored K x N: blocks of at least 256 rows copy their B block into 32-wide micro-panels first and
// run the panel-reading row strips; smaller blocks read B in place (the copy would not pay off).
func.func @matmul(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// CHECK-LABEL: func.func private @ftuner_dispatch_matmul_
// CHECK:         %[[B:.*]] = tensor.extract_slice %arg1
// CHECK:         %[[BIG:.*]] = arith.cmpi uge, %{{.*}}, %c256{{.*}} : index
// CHECK:         scf.if %[[BIG]] -> (tensor<?x?xf32>) {
// CHECK:           %[[E:.*]] = tensor.empty({{.*}}) : tensor<?x?x32xf32>
// CHECK:           %[[P:.*]] = func.call @ftuner_pack_b_n32_f32(%[[B]], %[[E]])
// CHECK:           func.call @ftuner_rows_8_n32_pb_f32(%{{.*}}, %[[P]],
// CHECK:         } else {
// CHECK-NOT:       ftuner_pack_b
// CHECK:           func.call @ftuner_rows_8_n32_f32(%{{.*}}, %[[B]],
// CHECK-LABEL: func.func private @ftuner_rows_8_n32_pb_f32(
// CHECK-SAME:    %arg1: tensor<?x?x32xf32>
// CHECK-LABEL: func.func private @ftuner_rows_8_n32_f32(
// CHECK-SAME:    %arg1: tensor<?x?xf32>
// CHECK-LABEL: func.func private @ftuner_pack_b_n32_f32(
// CHECK:         scf.for
// CHECK:           linalg.copy
// CHECK:           tensor.insert_slice {{.*}} [1, %{{.*}}, %c32{{.*}}] [1, 1, 1] : tensor<?x?xf32> into tensor<?x?x32xf32>
// CHECK:         scf.if
// CHECK:           linalg.copy
