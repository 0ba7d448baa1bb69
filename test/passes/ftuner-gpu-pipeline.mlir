// RUN: ftuner-opt %s --target=cuda:h200 --ftuner-gpu-pipeline | FileCheck %s --check-prefixes=CHECK,SM90
// RUN: ftuner-opt %s --target=cuda:a100 --ftuner-gpu-pipeline | FileCheck %s --check-prefixes=CHECK,SM80

// Dynamic matmul, batch_matmul and transposed-B matmul (fill + op, as front ends emit them) to host
// code plus PTX.
func.func @matmul(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s0 = tensor.dim %a, %c0 : tensor<?x?xf32>
  %s1 = tensor.dim %b, %c1 : tensor<?x?xf32>
  %empty = tensor.empty(%s0, %s1) : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%init : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
func.func @batch_matmul(%a: tensor<?x?x?xf32>, %b: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %s0 = tensor.dim %a, %c0 : tensor<?x?x?xf32>
  %s1 = tensor.dim %a, %c1 : tensor<?x?x?xf32>
  %s2 = tensor.dim %b, %c2 : tensor<?x?x?xf32>
  %empty = tensor.empty(%s0, %s1, %s2) : tensor<?x?x?xf32>
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<?x?x?xf32>, tensor<?x?x?xf32>) outs(%init : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %r : tensor<?x?x?xf32>
}
func.func @dense(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %s0 = tensor.dim %x, %c0 : tensor<?x?xf32>
  %s1 = tensor.dim %w, %c0 : tensor<?x?xf32>
  %empty = tensor.empty(%s0, %s1) : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<?x?xf32>, tensor<?x?xf32>) outs(%init : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// Host code: LLVM dialect functions that launch the kernels.
// CHECK-NOT:   linalg.
// CHECK-LABEL: llvm.func @matmul(
// CHECK:         gpu.launch_func
// CHECK-LABEL: llvm.func @_mlir_ciface_matmul(
// CHECK-LABEL: llvm.func @batch_matmul(
// CHECK:         gpu.launch_func
// CHECK-LABEL: llvm.func @dense(
// CHECK:         gpu.launch_func
// Device code: one PTX payload per kernel module, for the target's chip and PTX version.
// CHECK:       gpu.binary @ftuner_gpu_matmul_{{.*}}#gpu.object<#nvvm.target<O = 3, chip = "[[CHIP:sm_[0-9]+]]"
// SM90-SAME:     features = "+ptx80"
// SM80-SAME:     features = "+ptx70"
// SM90-SAME:     .version 8.0
// SM80-SAME:     .version 7.0
// CHECK-SAME:    .target [[CHIP]]
// CHECK-SAME:    .entry body(
// CHECK-SAME:    ld.shared
// CHECK-SAME:    fma.rn.f32
// CHECK-SAME:    bar.sync
// CHECK-SAME:    .entry edge(
// CHECK:       gpu.binary @ftuner_gpu_batch_matmul_
// CHECK-SAME:    %ctaid.z
// CHECK-SAME:    fma.rn.f32
// CHECK:       gpu.binary @ftuner_gpu_matmul_transpose_b_
// CHECK-SAME:    .entry body(
// CHECK-SAME:    fma.rn.f32
