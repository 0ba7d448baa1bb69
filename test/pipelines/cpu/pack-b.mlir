// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-select-ukernels --ftuner-tile | FileCheck %s

// B stored K x N: blocks of at least 256 rows, or of at least 8 row strips (64 rows of 8) when B's rows
// are a page apart (N >= 1024 floats), copy their B block into 32-wide micro-panels first and run the
// panel-reading row strips; other blocks read B in place (the copy would not pay off).
func.func @matmul(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// CHECK-LABEL: func.func private @ftuner_dispatch_matmul_
// CHECK:         %[[N:.*]] = tensor.dim %arg2, %c1
// CHECK:         scf.forall
// CHECK:         %[[BM:.*]] = arith.minui
// CHECK:         %[[MANY:.*]] = arith.cmpi uge, %[[BM]], %c256{{.*}} : index
// CHECK:         %[[SOME:.*]] = arith.cmpi uge, %[[BM]], %c64{{.*}} : index
// CHECK:         %[[FAR:.*]] = arith.cmpi uge, %[[N]], %c1024{{.*}} : index
// CHECK:         %[[WIDE:.*]] = arith.andi %[[SOME]], %[[FAR]] : i1
// CHECK:         %[[PACK:.*]] = arith.ori %[[MANY]], %[[WIDE]] : i1
// CHECK:         %[[B:.*]] = tensor.extract_slice %arg1
// CHECK:         scf.if %[[PACK]] -> (tensor<?x?xf32>) {
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
