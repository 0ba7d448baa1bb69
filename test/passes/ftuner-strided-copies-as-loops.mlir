// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-strided-copies-as-loops | FileCheck %s

// A copy out of a strided view (a column slice of GPT-2's fused QKV result) becomes a linalg.copy, a
// loop nest LLVM vectorizes; a copy between contiguous buffers stays a memref.copy (a memcpy).
func.func @column_slice(%qkv: memref<?x96xf32>, %out: memref<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %qkv, %c0 : memref<?x96xf32>
  %k = memref.subview %qkv[0, 32] [%n, 32] [1, 1] : memref<?x96xf32> to memref<?x32xf32, strided<[96, 1], offset: 32>>
  memref.copy %k, %out : memref<?x32xf32, strided<[96, 1], offset: 32>> to memref<?x32xf32>
  return
}

func.func @contiguous(%x: memref<?x32xf32>, %out: memref<?x32xf32>) {
  memref.copy %x, %out : memref<?x32xf32> to memref<?x32xf32>
  return
}

// CHECK-LABEL: func.func @column_slice(
// CHECK:         %[[K:.+]] = memref.subview
// CHECK-NOT:     memref.copy
// CHECK:         linalg.copy {{.*}}ins(%[[K]] : memref<?x32xf32, strided<[96, 1], offset: 32>>) outs(%{{.+}} : memref<?x32xf32>)
// CHECK-LABEL: func.func @contiguous(
// CHECK:         memref.copy
