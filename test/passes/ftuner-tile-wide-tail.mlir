// RUN: ftuner-opt %s --ftuner-tile | FileCheck %s

// A 4x32 set of 16-lane vectors: columns run in 32-wide strips, the rest (fewer than 32) in one masked
// tail, chosen at run time by its width: up to 16 columns one masked vector (4xm16), more one full and
// one masked vector (4xm32), so a 24-column tail is one uKernel call whose A broadcasts serve both.
// CHECK-LABEL: func.func private @ftuner_rows_4_n32_f32(
// CHECK:         %[[N:.*]] = tensor.dim %arg2, %c1
// CHECK:         %[[REST:.*]] = arith.remui %[[N]], %c32
// CHECK:         %[[FULL:.*]] = arith.subi %[[N]], %[[REST]]
// CHECK:         scf.for
// CHECK:           scf.for %{{.*}} = %c0 to %[[FULL]] step %c32
// CHECK:             func.call @ftuner_uk_matmul_4x32_f32(
// CHECK-NOT:       ftuner_uk_matmul_4x16_f32
// CHECK:           scf.for %[[J:.*]] = %[[FULL]] to %[[N]] step %c32
// CHECK:             %[[W:.*]] = arith.subi %[[N]], %[[J]]
// CHECK:             %[[FITS:.*]] = arith.cmpi ule, %[[W]], %c16
// CHECK:             scf.if %[[FITS]] -> (tensor<4x?xf32>) {
// CHECK:               func.call @ftuner_uk_matmul_4xm16_f32(
// CHECK:             } else {
// CHECK:               func.call @ftuner_uk_matmul_4xm32_f32(

// The two-vector tail: the first vector of each C and B row is read whole, the second under the mask
// of the w - 16 columns past it; one broadcast of each A element per reduction step feeds both FMAs.
// CHECK-LABEL: func.func private @ftuner_uk_matmul_4xm32_f32(
// CHECK-SAME:      %[[TA:[^:]+]]: tensor<4x?xf32>, %[[TB:[^:]+]]: tensor<?x?xf32>, %[[TC:[^:]+]]: tensor<4x?xf32>) -> tensor<4x?xf32>
// CHECK:         %[[TW:.*]] = tensor.dim %[[TC]], %c1
// CHECK:         %[[LIVE:.*]] = arith.subi %[[TW]], %[[C16:.*]] : index
// CHECK:         %[[MASK:.*]] = vector.create_mask %[[LIVE]] : vector<16xi1>
// CHECK:         vector.transfer_read %[[TC]][%{{.*}}, %c0], %{{.*}} {in_bounds = [true]} : tensor<4x?xf32>, vector<16xf32>
// CHECK:         vector.transfer_read %[[TC]][%{{.*}}, %[[C16]]], %{{.*}}, %[[MASK]] {in_bounds = [true]} : tensor<4x?xf32>, vector<16xf32>
// CHECK:         scf.for %[[KK:[^ ]+]] =
// CHECK:           %[[B0:.*]] = vector.transfer_read %[[TB]][%[[KK]], %c0], %{{.*}} {in_bounds = [true]} : tensor<?x?xf32>, vector<16xf32>
// CHECK:           %[[B1:.*]] = vector.transfer_read %[[TB]][%[[KK]], %[[C16]]], %{{.*}}, %[[MASK]] {in_bounds = [true]}
// CHECK:           %[[E:.*]] = vector.transfer_read %[[TA]][%{{.*}}, %[[KK]]]
// CHECK:           %[[S:.*]] = vector.broadcast %[[E]] : vector<1xf32> to vector<16xf32>
// CHECK:           vector.fma %[[S]], %[[B0]], %{{.*}} : vector<16xf32>
// CHECK-NEXT:      vector.fma %[[S]], %[[B1]], %{{.*}} : vector<16xf32>
// CHECK:         vector.transfer_write %{{.*}}, %{{.*}}[%{{.*}}, %[[C16]]], %[[MASK]] {in_bounds = [true]}
// CHECK:         return
func.func @matmul(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul {ftuner.ukernels = {cores = 2 : i64, dtype = "f32", family = "matmul", kc = 32 : i64, lanes = 16 : i64,
                                         mc = 64 : i64, mr = 4 : i64, nc = 64 : i64, nr = 32 : i64}}
      ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
