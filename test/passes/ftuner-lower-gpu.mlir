// RUN: ftuner-opt %s --target=cuda:h200 --ftuner-select-ukernels --ftuner-bufferize --ftuner-tile --ftuner-lower-gpu | FileCheck %s
// RUN: not ftuner-opt %s --target=x86-avx512 --ftuner-lower-gpu 2>&1 | FileCheck %s --check-prefix=CPU

// The fill is not a uKernel op: it becomes a GPU kernel of its own (parallel loops mapped to blocks and
// threads), so host code never touches the device buffers.
func.func @scale_free(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %z = arith.constant 0.0 : f32
  %init = linalg.fill ins(%z : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%init : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// CHECK-LABEL: llvm.func @scale_free(
// CHECK:         gpu.launch_func @scale_free_kernel::@scale_free_kernel
// CHECK:         gpu.launch_func @ftuner_gpu_matmul_{{.*}}::@body
// CHECK:       gpu.binary @scale_free_kernel
// CHECK-SAME:    .entry scale_free_kernel(
// CHECK:       gpu.binary @ftuner_gpu_matmul_
// CHECK-SAME:    .entry body(

// CPU: ftuner-opt: ftuner-lower-gpu needs a GPU target (--target=cuda:...)
