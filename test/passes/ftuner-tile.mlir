// RUN: ftuner-opt %s --ftuner-tile | FileCheck %s

// The uKernel set is given explicitly, so this test does not depend on the host or the selector:
// body tile 4x16, row remainders 2 and 1; the columns past the last 16 go through one masked tile
// (16 lanes, the first `w` of them live).

// CHECK-LABEL: func.func @matmul(
// CHECK-NOT:     linalg.matmul
// CHECK:         %[[R:.*]] = call @ftuner_dispatch_matmul_4x16_mc64_nc64_kc32_p2_f32(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK:         %[[C:.*]] = tensor.cast %[[R]] : tensor<?x?xf32> to tensor<?x8xf32>
// CHECK:         return %[[C]]
func.func @matmul(%a: tensor<?x?xf32>, %b: tensor<?x8xf32>, %c: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = linalg.matmul {ftuner.ukernels = {cores = 2 : i64, dtype = "f32", family = "matmul", kc = 32 : i64, lanes = 16 : i64,
                                         mc = 64 : i64, mr = 4 : i64, nc = 64 : i64, nr = 16 : i64}}
      ins(%a, %b : tensor<?x?xf32>, tensor<?x8xf32>) outs(%c : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// An op without the attribute is left alone.
// CHECK-LABEL: func.func @untouched(
// CHECK:         linalg.matmul ins
// CHECK-NOT:     call @ftuner_dispatch
// CHECK:         return
func.func @untouched(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// Dispatch: the block shape is computed from the runtime dims, one parallel task per block, a loop over
// reduction blocks, then one row-strip function per row size, each over its own row range.
// CHECK-LABEL: func.func private @ftuner_dispatch_matmul_4x16_mc64_nc64_kc32_p2_f32(
// CHECK-SAME:      %[[A:[^:]*]]: tensor<?x?xf32>, %[[B:[^:]*]]: tensor<?x?xf32>, %[[CI:[^:]*]]: tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK-SAME:      ftuner.dispatch = "matmul"
// CHECK-DAG:     %[[M:[^ ]+]] = tensor.dim %[[CI]], %c0
// CHECK-DAG:     %[[N:[^ ]+]] = tensor.dim %[[CI]], %c1
// CHECK-DAG:     %[[K:[^ ]+]] = tensor.dim %[[A]], %c1
// CHECK:         arith.ceildivui %[[M]], %c64
// CHECK:         arith.ceildivui %[[N]], %c64
// CHECK:         scf.forall (%[[I0:[^,]+]], %[[J0:[^)]+]]) = (0, 0) to (%[[M]], %[[N]]) step (%[[MC:[^,]+]], %[[NC:[^)]+]]) shared_outs
// CHECK:           %[[BM:[^ ]+]] = arith.minui %{{.*}}, %[[MC]]
// CHECK:           arith.minui %{{.*}}, %[[NC]]
// CHECK:           arith.remui %[[BM]], %c4
// CHECK:           scf.for %{{.*}} = %{{.*}} to %[[K]] step %{{.*}} iter_args
// CHECK:             %[[AB:.*]] = tensor.extract_slice %[[A]][%[[I0]], %{{.*}}]
// CHECK:             %[[BB:.*]] = tensor.extract_slice %[[B]][%{{.*}}, %[[J0]]]
// CHECK:             %[[R4:.*]] = func.call @ftuner_rows_4_n16_f32(%[[AB]], %[[BB]],
// CHECK:             %[[R2:.*]] = func.call @ftuner_rows_2_n16_f32(%[[AB]], %[[BB]], %[[R4]],
// CHECK:             %[[R1:.*]] = func.call @ftuner_rows_1_n16_f32(%[[AB]], %[[BB]], %[[R2]],
// CHECK:             scf.yield %[[R1]]
// CHECK:           scf.forall.in_parallel
// CHECK:             tensor.parallel_insert_slice

// Row strips: column body tiles, then one loop over the masked tail (it runs at most once: its step is
// the 16-lane tail width and fewer than 16 columns are left), the tile's width dynamic.
// CHECK-LABEL: func.func private @ftuner_rows_4_n16_f32(
// CHECK-SAME:      %[[RA:[^:]+]]: tensor<?x?xf32>, %[[RB:[^:]+]]: tensor<?x?xf32>
// CHECK:         %[[BN:.*]] = tensor.dim %{{[^,]*}}arg2, %c1 : tensor<?x?xf32>
// CHECK:         %[[FULL:.*]] = arith.subi %[[BN]], %{{.*}} : index
// CHECK:         scf.for
// CHECK:           scf.for %{{.*}} = %c0 to %[[FULL]] step %c16
// CHECK:             tensor.extract_slice {{.*}} to tensor<4x?xf32>
// CHECK:             tensor.extract_slice {{.*}} to tensor<?x16xf32>
// CHECK:             func.call @ftuner_uk_matmul_4x16_f32(
// CHECK:           scf.for %[[J:.*]] = %[[FULL]] to %[[BN]] step %c16
// CHECK:             %[[W:.*]] = arith.subi %[[BN]], %[[J]] : index
// CHECK:             tensor.extract_slice %[[RB]][0, %[[J]]] [%{{.*}}, %[[W]]] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
// CHECK:             tensor.extract_slice %{{.*}}[%{{.*}}, %[[J]]] [4, %[[W]]] [1, 1] : tensor<?x?xf32> to tensor<4x?xf32>
// CHECK:             func.call @ftuner_uk_matmul_4xm16_f32(
// CHECK-NOT:       func.call @ftuner_uk_matmul_4x8_f32(
// CHECK:         return
// CHECK-LABEL: func.func private @ftuner_rows_2_n16_f32(
// CHECK:             func.call @ftuner_uk_matmul_2x16_f32(
// CHECK:             func.call @ftuner_uk_matmul_2xm16_f32(
// CHECK-LABEL: func.func private @ftuner_rows_1_n16_f32(
// CHECK:             func.call @ftuner_uk_matmul_1xm16_f32(

// uKernels: static tiles, reduction length dynamic.
// CHECK-LABEL: func.func private @ftuner_uk_matmul_4x16_f32(
// CHECK-SAME:      tensor<4x?xf32>, %{{.*}}: tensor<?x16xf32>, %{{.*}}: tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-SAME:      attributes {ftuner.ukernel, ftuner.unroll_k}
// CHECK-NEXT:    linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x?xf32>, tensor<?x16xf32>) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK-LABEL: func.func private @ftuner_uk_matmul_1x16_f32(
// CHECK-SAME:      tensor<1x?xf32>, %{{.*}}: tensor<?x16xf32>, %{{.*}}: tensor<1x16xf32>) -> tensor<1x16xf32>

// The masked tail: vector code, one 16-lane vector per row under the mask of the tile's first w lanes;
// C read and written once under the mask, a masked B row and a broadcast A element per row each step.
// Four rows are fewer than the 8 FMAs the core keeps in flight (the set's default `chains`), so the
// reduction runs two steps at a time into two sets of accumulators (the second starts at zero), the
// odd last step goes into the first set, and the sets are summed before the store.
// CHECK-LABEL: func.func private @ftuner_uk_matmul_4xm16_f32(
// CHECK-SAME:      %[[TA:[^:]+]]: tensor<4x?xf32>, %[[TB:[^:]+]]: tensor<?x?xf32>, %[[TC:[^:]+]]: tensor<4x?xf32>) -> tensor<4x?xf32>
// CHECK-SAME:      attributes {ftuner.masked_ukernel}
// CHECK:         %[[K:.*]] = tensor.dim %[[TA]], %c1
// CHECK:         %[[TW:.*]] = tensor.dim %[[TC]], %c1
// CHECK:         %[[MASK:.*]] = vector.create_mask %[[TW]] : vector<16xi1>
// CHECK:         %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK-COUNT-4: vector.transfer_read %[[TC]][{{.*}}], %{{.*}}, %[[MASK]] {in_bounds = [true]} : tensor<4x?xf32>, vector<16xf32>
// CHECK:         %[[HALF:.*]] = arith.divui %[[K]], %[[TWO:.*]] : index
// CHECK:         %[[EVEN:.*]] = arith.muli %[[HALF]], %{{.*}} : index
// CHECK:         %[[SETS:.*]]:8 = scf.for %[[KK:.*]] = %c0 to %[[EVEN]] step %{{.*}} iter_args(
// CHECK-SAME:        %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]])
// CHECK:           %[[BROW:.*]] = vector.transfer_read %[[TB]][%[[KK]], %c0], %{{.*}}, %[[MASK]] {in_bounds = [true]} : tensor<?x?xf32>, vector<16xf32>
// CHECK:           %[[E:.*]] = vector.transfer_read %[[TA]][%{{.*}}, %[[KK]]], %{{.*}} {in_bounds = [true]} : tensor<4x?xf32>, vector<1xf32>
// CHECK:           %[[S:.*]] = vector.broadcast %[[E]] : vector<1xf32> to vector<16xf32>
// CHECK:           vector.fma %[[S]], %[[BROW]], %{{.*}} : vector<16xf32>
// CHECK-COUNT-3:   vector.fma
// CHECK:           %[[NEXT:.*]] = arith.addi %[[KK]], %{{.*}} : index
// CHECK:           vector.transfer_read %[[TB]][%[[NEXT]], %c0], %{{.*}}, %[[MASK]]
// CHECK-COUNT-4:   vector.fma
// CHECK:           scf.yield
// CHECK:         %[[ACC:.*]]:4 = scf.for %{{.*}} = %[[EVEN]] to %[[K]] step %c1 iter_args(%{{.*}} = %[[SETS]]#0, %{{.*}} = %[[SETS]]#1, %{{.*}} = %[[SETS]]#2, %{{.*}} = %[[SETS]]#3)
// CHECK-COUNT-4:   vector.fma
// CHECK:           scf.yield
// CHECK:         %[[SUM:.*]] = arith.addf %[[ACC]]#0, %[[SETS]]#4 : vector<16xf32>
// CHECK-COUNT-3: arith.addf
// CHECK:         vector.transfer_write %[[SUM]], %[[TC]][%c0{{.*}}, %c0], %[[MASK]] {in_bounds = [true]}
// CHECK-COUNT-3: vector.transfer_write {{.*}}, %[[MASK]]
// CHECK-NEXT:    return
// CHECK-NOT:     func.func private @ftuner_uk_matmul_4x8_f32(
