// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-select-ukernels --ftuner-tile --ftuner-lower-cpu --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s

// Attention scores: a batch_matmul's [24, M, N] reshaped to [2, 12, M, N]. Bufferization copies the
// dispatch's result (typed strided) into a fresh buffer for memref.reshape; once the calls are resolved
// the buffer is visibly a contiguous allocation that nothing touches afterwards, and the reshape reads it.
func.func @bmm_reshape(%a: tensor<24x?x8xf32>, %b: tensor<24x8x?xf32>) -> tensor<2x12x?x?xf32> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %m = tensor.dim %a, %c1 : tensor<24x?x8xf32>
  %n = tensor.dim %b, %c2 : tensor<24x8x?xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%m, %n) : tensor<24x?x?xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<24x?x?xf32>) -> tensor<24x?x?xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<24x?x8xf32>, tensor<24x8x?xf32>) outs(%f : tensor<24x?x?xf32>) -> tensor<24x?x?xf32>
  %c2i = arith.constant 2 : i64
  %c12 = arith.constant 12 : i64
  %mi = arith.index_cast %m : index to i64
  %ni = arith.index_cast %n : index to i64
  %shape = tensor.from_elements %c2i, %c12, %mi, %ni : tensor<4xi64>
  %s = tensor.reshape %r(%shape) : (tensor<24x?x?xf32>, tensor<4xi64>) -> tensor<2x12x?x?xf32>
  %e2 = tensor.empty(%m, %n) : tensor<2x12x?x?xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<2x12x?x?xf32>) outs(%e2 : tensor<2x12x?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = math.exp %in : f32
    linalg.yield %y : f32
  } -> tensor<2x12x?x?xf32>
  return %x : tensor<2x12x?x?xf32>
}

// CHECK-LABEL: IR Dump After ftuner-keep-dispatch-calls
// CHECK-LABEL: func.func @bmm_reshape(
// CHECK:         %[[C:.+]] = memref.alloc({{.*}}) {{.*}} : memref<24x?x?xf32>
// CHECK:         call @ftuner_dispatch_batch_matmul
// CHECK:         memref.copy %{{.*}}, %[[BUF:.+]] : memref<24x?x?xf32, strided<[?, ?, ?], offset: ?>> to memref<24x?x?xf32>
// CHECK-NEXT:    memref.reshape %[[BUF]](
// CHECK-LABEL: IR Dump After ftuner-read-reshapes-in-place
// CHECK-LABEL: func.func @bmm_reshape(
// CHECK:         %[[C:.+]] = memref.alloc({{.*}}) {{.*}} : memref<24x?x?xf32>
// CHECK:         call @ftuner_dispatch_batch_matmul
// CHECK-NOT:     memref.copy {{.*}} to memref<24x?x?xf32>
// CHECK:         %[[VIEW:.+]] = memref.cast %[[C]] : memref<24x?x?xf32> to memref<24x?x?xf32>
// CHECK-NOT:     memref.copy {{.*}} to memref<24x?x?xf32>
// CHECK:         memref.reshape %[[VIEW]](
