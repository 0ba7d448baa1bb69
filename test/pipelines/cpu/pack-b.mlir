// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-select-ukernels --ftuner-tile | FileCheck %s

// B stored K x N: blocks of at least 256 rows, or of at least 8 row strips (64 rows of 8) when B's rows
// are 3 KiB or more apart (N >= 768 floats), copy their B block into 32-wide micro-panels first and run the
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
// CHECK:         %[[FAR:.*]] = arith.cmpi uge, %[[N]], %c768{{.*}} : index
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
// The pack is vector code: one 32-lane row read and written per panel row; the last panel's columns
// under a mask of the bn % 32 live lanes (never past the block).
// CHECK-LABEL: func.func private @ftuner_pack_b_n32_f32(
// CHECK-SAME:      %[[SRC:[^:]+]]: tensor<?x?xf32>, %[[DST:[^:]+]]: tensor<?x?x32xf32>)
// CHECK:         %[[FULL:.*]] = scf.for %[[P:.*]] = %c0 to %{{.*}} step %c1 iter_args(
// CHECK:           %[[J:.*]] = arith.muli %[[P]], %c32
// CHECK:           scf.for %[[K:.*]] = %c0 to %{{.*}} step %c1
// CHECK:             %[[ROW:.*]] = vector.transfer_read %[[SRC]][%[[K]], %[[J]]], %{{.*}} {in_bounds = [true]} : tensor<?x?xf32>, vector<32xf32>
// CHECK:             vector.transfer_write %[[ROW]], %{{.*}}[%[[P]], %[[K]], %c0] {in_bounds = [true]} : vector<32xf32>, tensor<?x?x32xf32>
// CHECK:         %[[REST:.*]] = arith.subi
// CHECK:         %[[MASK:.*]] = vector.create_mask %[[REST]] : vector<32xi1>
// CHECK:         scf.if
// CHECK:           scf.for
// CHECK:             vector.transfer_read %[[SRC]][%{{.*}}], %{{.*}}, %[[MASK]] {in_bounds = [true]}
// CHECK:             vector.transfer_write %{{.*}}, %[[MASK]] {in_bounds = [true]}
// CHECK-NOT:     linalg.copy
