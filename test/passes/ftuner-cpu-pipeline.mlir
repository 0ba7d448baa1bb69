// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-cpu-pipeline | FileCheck %s
// RUN: ftuner-opt %s --target=x86-avx512 --pass-pipeline='builtin.module(ftuner-select-ukernels,canonicalize,ftuner-tile,ftuner-lower-cpu{num-threads=2})' | FileCheck %s

// A batched matmul and a transposed-B matmul, all dims dynamic, straight to the LLVM dialect.
func.func @batch(%a: tensor<?x?x?xf32>, %b: tensor<?x?x?xf32>, %c: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<?x?x?xf32>, tensor<?x?x?xf32>) outs(%c : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %r : tensor<?x?x?xf32>
}

func.func @dense(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// Each public function calls its op's dispatch; row strips, packs and uKernels are inlined into the
// dispatch, which holds the OpenMP loop and the vectorized uKernels.
// CHECK-NOT:   ftuner_rows
// CHECK-NOT:   ftuner_uk
// CHECK-LABEL: llvm.func @batch(
// CHECK-NOT:     omp.parallel
// CHECK:         llvm.call @[[$BATCH:ftuner_dispatch_batch_matmul_[a-z0-9_]+]]({{.*}}) {no_inline}
// CHECK-LABEL: llvm.func @_mlir_ciface_batch(
// CHECK-LABEL: llvm.func @dense(
// CHECK-NOT:     omp.parallel
// CHECK:         llvm.call @[[$DENSE:ftuner_dispatch_matmul_transpose_b_[a-z0-9_]+]]({{.*}}) {no_inline}
// CHECK-LABEL: llvm.func @_mlir_ciface_dense(
// CHECK:       llvm.func @[[$BATCH]](
// CHECK:         omp.parallel
// CHECK:         llvm.intr.fmuladd({{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK:       llvm.func @[[$DENSE]](
// CHECK:         omp.parallel
// CHECK:         llvm.intr.fmuladd({{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK-NOT:   ftuner_rows
// CHECK-NOT:   ftuner_uk
// CHECK-NOT:   ftuner_pack
