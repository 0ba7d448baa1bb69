// RUN: ftuner-opt %s --target=x86-avx512 '--pass-pipeline=builtin.module(ftuner-cpu-pipeline{profile=1 num-threads=1})' | FileCheck %s

// Profile mode: each top-level op of a public function that does work is bracketed by two reads of
// omp_get_wtime, the difference added atomically to the op's slot of the module's clock global; the
// module lists the slots (function, kind, label) and exports ftuner_take_profile(slot).
func.func @mm_relu(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %relu = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%r : tensor<?x?xf32>) {
  ^bb0(%x: f32):
    %m = arith.maximumf %x, %zero : f32
    linalg.yield %m : f32
  } -> tensor<?x?xf32>
  return %relu : tensor<?x?xf32>
}

// CHECK:       module attributes {ftuner.profile_sites = "{{\[\[}}\22mm_relu\22, \22total\22
// CHECK-SAME:    [\22mm_relu\22, \22uKernels\22, \22matmul dispatch at {{.*}}:7:8\22]
// CHECK-SAME:    [\22mm_relu\22, \22elementwise\22, \22linalg.generic at {{.*}}:9:11\22]
// CHECK:       llvm.mlir.global private @ftuner_profile_seconds(dense<0.000000e+00> : tensor<5xf64>)
// CHECK:       llvm.func @omp_get_wtime() -> f64
// CHECK-LABEL: llvm.func @ftuner_take_profile(%arg0: i64) -> f64
// CHECK:         llvm.load
// CHECK:         llvm.store
// CHECK-LABEL: llvm.func @mm_relu(
// CHECK:         %[[START:.*]] = llvm.call @omp_get_wtime() : () -> f64
// CHECK:         llvm.call @ftuner_dispatch_matmul_
// CHECK-NEXT:    %[[AFTER:.*]] = llvm.call @omp_get_wtime() : () -> f64
// CHECK-NEXT:    %[[SPENT:.*]] = llvm.fsub %[[AFTER]], %{{.*}} : f64
// CHECK:         llvm.atomicrmw fadd %{{.*}}, %[[SPENT]]
// CHECK:         llvm.call @ftuner_outlined_mm_relu_
// CHECK:         %[[CALL:.*]] = llvm.fsub %{{.*}}, %[[START]] : f64
// CHECK-NEXT:    llvm.getelementptr
// CHECK-NEXT:    llvm.atomicrmw fadd %{{.*}}, %[[CALL]]
// CHECK:         llvm.return
