// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-lower-cpu | FileCheck %s
// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-lower-cpu=num-threads=1 | FileCheck %s --check-prefix=SEQ

// Elementwise ops and row reductions of public functions run over the cores when their iteration
// space has at least 32768 points (a run-time choice: below, the serial loop nest runs); the rows
// (every leading parallel dim) are split, the innermost dim stays whole. One thread: serial only.
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
func.func @bias_gelu(%x: tensor<?x?x768xf32>, %o: tensor<?x?x768xf32>) -> tensor<?x?x768xf32> {
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<?x?x768xf32>) outs(%o : tensor<?x?x768xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.erf %in : f32
    linalg.yield %e : f32
  } -> tensor<?x?x768xf32>
  return %r : tensor<?x?x768xf32>
}
func.func @row_sum(%x: tensor<?x?x768xf32>, %o: tensor<?x?x1xf32>) -> tensor<?x?x1xf32> {
  %r = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<?x?x768xf32>) outs(%o : tensor<?x?x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<?x?x1xf32>
  return %r : tensor<?x?x1xf32>
}

// CHECK-LABEL: llvm.func @bias_gelu(
// CHECK:         llvm.mlir.constant(32768 : index)
// CHECK:         llvm.icmp "uge"
// CHECK:         llvm.call @ftuner_kernel_bias_gelu_0(%{{.*}}) {no_inline}
// The reduction's choice yields its result buffer: outlined after bufferization too (outline.py), returning it
// CHECK-LABEL: llvm.func @row_sum(
// CHECK:         llvm.mlir.constant(32768 : index)
// CHECK:         %[[COND:.+]] = llvm.icmp "uge"
// CHECK-NOT:     omp.parallel
// CHECK:         llvm.call @ftuner_outlined_row_sum_0(%[[COND]], {{.*}}) -> !llvm.struct<(ptr, ptr, i64, array<3 x i64>, array<3 x i64>)>
// CHECK-NOT:     omp.parallel
// CHECK:         llvm.return
// CHECK-LABEL: llvm.func internal @ftuner_kernel_bias_gelu_0(
// CHECK:         omp.parallel
// CHECK:           omp.loop_nest {{.*}} collapse(2)
// CHECK-LABEL: llvm.func internal @ftuner_outlined_row_sum_0(
// CHECK-SAME:    -> !llvm.struct<(ptr, ptr, i64, array<3 x i64>, array<3 x i64>)> attributes {ftuner.outlined, no_inline
// CHECK:         omp.parallel
// CHECK:           omp.loop_nest {{.*}} collapse(2)
// CHECK:         llvm.return %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<3 x i64>, array<3 x i64>)>
// SEQ-NOT:     omp.parallel
// SEQ-NOT:     32768
