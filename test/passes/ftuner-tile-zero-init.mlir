// RUN: ftuner-opt %s --ftuner-tile --canonicalize | FileCheck %s

// A matmul whose init is a zero fill calls the dispatch that overwrites C: its first reduction block runs
// uKernels that start from zero accumulators instead of reading C, so the fill's pass over C goes away.
// CHECK-LABEL: func.func @zero_init(
// CHECK-NOT:     linalg.fill
// CHECK:         %[[E:.*]] = tensor.empty
// CHECK-NOT:     linalg.fill
// CHECK:         call @[[$Z:ftuner_dispatch_matmul_4x16_mc64_nc64_kc32_p2_z_f32]](%{{.*}}, %{{.*}}, %[[E]])
func.func @zero_init(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul {ftuner.ukernels = {cores = 2 : i64, dtype = "f32", family = "matmul", kc = 32 : i64, lanes = 16 : i64,
                                         mc = 64 : i64, mr = 4 : i64, nc = 64 : i64, nr = 16 : i64}}
      ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%init : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// Any other init is accumulated into: the fill stays, the accumulating dispatch is called on it.
// CHECK-LABEL: func.func @one_init(
// CHECK:         %[[F:.*]] = linalg.fill
// CHECK:         call @ftuner_dispatch_matmul_4x16_mc64_nc64_kc32_p2_f32(%{{.*}}, %{{.*}}, %[[F]])
func.func @one_init(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %one = arith.constant 1.0 : f32
  %init = linalg.fill ins(%one : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul {ftuner.ukernels = {cores = 2 : i64, dtype = "f32", family = "matmul", kc = 32 : i64, lanes = 16 : i64,
                                         mc = 64 : i64, mr = 4 : i64, nc = 64 : i64, nr = 16 : i64}}
      ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%init : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// The overwriting dispatch: K = 0 leaves zeros; otherwise the first reduction block goes through the
// overwriting row strips, the later blocks (from kc = 32 on) through the accumulating ones.
// CHECK:       func.func private @[[$Z]](
// CHECK:         scf.forall
// CHECK:           scf.if
// CHECK:             linalg.fill
// CHECK:           } else {
// CHECK:             call @ftuner_rows_4_n16_z_f32(
// CHECK:           scf.for %{{.*}} = %c32 to
// CHECK:             call @ftuner_rows_4_n16_f32(
// CHECK-LABEL: func.func private @ftuner_uk_matmul_4x16_z_f32(
// CHECK:         %[[ZT:.*]] = linalg.fill
// CHECK:         linalg.matmul {{.*}} outs(%[[ZT]]
