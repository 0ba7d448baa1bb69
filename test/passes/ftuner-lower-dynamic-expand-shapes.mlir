// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-lower-dynamic-expand-shapes | FileCheck %s

// conv2d's GEMM rows (n * oh * ow) split back into n, oh, ow: three dynamic sizes in one group, which
// MLIR 22's expand-strided-metadata asserts on. It becomes a reinterpret_cast whose strides are the
// source's row stride times the sizes after each dim in the group; one dynamic size per group stays an expand.
func.func @rows(%m: memref<?x8xf32>, %n: index, %oh: index, %ow: index) -> memref<?x?x?x8xf32> {
  %e = memref.expand_shape %m [[0, 1, 2], [3]] output_shape [%n, %oh, %ow, 8] : memref<?x8xf32> into memref<?x?x?x8xf32>
  return %e : memref<?x?x?x8xf32>
}

func.func @one_dynamic(%m: memref<?x8xf32>, %t: index) -> memref<4x?x8xf32> {
  %e = memref.expand_shape %m [[0, 1], [2]] output_shape [4, %t, 8] : memref<?x8xf32> into memref<4x?x8xf32>
  return %e : memref<4x?x8xf32>
}

// CHECK-LABEL: func.func @rows(
// CHECK-SAME:      %[[M:[^:]+]]: memref<?x8xf32>, %[[N:[^:]+]]: index, %[[OH:[^:]+]]: index, %[[OW:[^:]+]]: index)
// CHECK-NOT:     memref.expand_shape
// CHECK:         %[[BASE:[^,]+]], %{{[^,]+}}, %{{[^,]+}}, %[[S:[^:]+]]:2 = memref.extract_strided_metadata %[[M]]
// CHECK:         %[[OWS:.+]] = arith.muli %[[S]]#0, %[[OW]] : index
// CHECK:         %[[OHOWS:.+]] = arith.muli %[[OWS]], %[[OH]] : index
// CHECK:         memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [%[[N]], %[[OH]], %[[OW]], 8], strides: [%[[OHOWS]], %[[OWS]], 8, 1]
// CHECK-LABEL: func.func @one_dynamic(
// CHECK:         memref.expand_shape
