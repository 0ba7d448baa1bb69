// RUN: ftuner-opt %s --target=cuda:h200 --ftuner-select-ukernels --ftuner-bufferize | FileCheck %s

// Destination passing: the result becomes an out buffer, the tensors become buffers, and the uKernel
// annotation survives bufferization (the GPU path tiles buffers).
// CHECK-LABEL: func.func @dense(
// CHECK-SAME:      %[[X:[^:]+]]: memref<?x768xf32>, %[[W:[^:]+]]: memref<2304x768xf32>, %[[OUT:[^:]+]]: memref<?x2304xf32>)
// CHECK-SAME:      attributes {llvm.emit_c_interface}
// CHECK-NOT:     tensor<
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[OUT]] : memref<?x2304xf32>)
// CHECK:         linalg.matmul
// CHECK-SAME:      ftuner.gpu_ukernels = {body = array<i64: 128, 128, 8, 8, 8>, dtype = "f32", edge = array<i64: 32, 32, 8, 2, 2>, family = "matmul_transpose_b", sms = 132 : i64}
// CHECK-SAME:      ins(%[[X]], %[[W]] : memref<?x768xf32>, memref<2304x768xf32>) outs(%[[OUT]] : memref<?x2304xf32>)
// CHECK-NEXT:    return
func.func @dense(%x: tensor<?x768xf32>, %w: tensor<2304x768xf32>) -> tensor<?x2304xf32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x768xf32>
  %e = tensor.empty(%m) : tensor<?x2304xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x2304xf32>) -> tensor<?x2304xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<?x768xf32>, tensor<2304x768xf32>) outs(%f : tensor<?x2304xf32>) -> tensor<?x2304xf32>
  return %r : tensor<?x2304xf32>
}
