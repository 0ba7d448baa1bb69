// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-read-reshapes-in-place | FileCheck %s

// Attention scores on buffers: the dispatch writes a contiguous [24, M, N] allocation, typed strided,
// so bufferization copied it into a fresh buffer for memref.reshape. Nothing touches the allocation
// after the copy: the reshape reads it in place and the copy goes. A buffer written after its copy
// keeps the copy.
!strided = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
func.func private @dispatch(%a: !strided) attributes {ftuner.dispatch = "batch_matmul"}

func.func @scores(%m: index, %n: index, %shape: memref<4xi64>) -> memref<2x12x?x?xf32> {
  %alloc = memref.alloc(%m, %n) {alignment = 64 : i64} : memref<24x?x?xf32>
  %d = memref.cast %alloc : memref<24x?x?xf32> to !strided
  call @dispatch(%d) {no_inline} : (!strided) -> ()
  %v = memref.cast %alloc : memref<24x?x?xf32> to memref<24x?x?xf32, strided<[?, ?, ?], offset: ?>>
  %copy = memref.alloc(%m, %n) {alignment = 64 : i64} : memref<24x?x?xf32>
  memref.copy %v, %copy : memref<24x?x?xf32, strided<[?, ?, ?], offset: ?>> to memref<24x?x?xf32>
  %r = memref.reshape %copy(%shape) : (memref<24x?x?xf32>, memref<4xi64>) -> memref<2x12x?x?xf32>
  return %r : memref<2x12x?x?xf32>
}

func.func @written_after(%m: index, %n: index, %shape: memref<4xi64>) -> memref<2x12x?x?xf32> {
  %alloc = memref.alloc(%m, %n) {alignment = 64 : i64} : memref<24x?x?xf32>
  %d = memref.cast %alloc : memref<24x?x?xf32> to !strided
  call @dispatch(%d) {no_inline} : (!strided) -> ()
  %v = memref.cast %alloc : memref<24x?x?xf32> to memref<24x?x?xf32, strided<[?, ?, ?], offset: ?>>
  %copy = memref.alloc(%m, %n) {alignment = 64 : i64} : memref<24x?x?xf32>
  memref.copy %v, %copy : memref<24x?x?xf32, strided<[?, ?, ?], offset: ?>> to memref<24x?x?xf32>
  call @dispatch(%d) {no_inline} : (!strided) -> ()
  %r = memref.reshape %copy(%shape) : (memref<24x?x?xf32>, memref<4xi64>) -> memref<2x12x?x?xf32>
  return %r : memref<2x12x?x?xf32>
}

// CHECK-LABEL: func.func @scores(
// CHECK:         %[[ALLOC:.+]] = memref.alloc(%{{.+}}, %{{.+}}) {alignment = 64 : i64} : memref<24x?x?xf32>
// CHECK:         call @dispatch(
// CHECK-NOT:     memref.copy
// CHECK:         %[[SAME:.+]] = memref.cast %[[ALLOC]] : memref<24x?x?xf32> to memref<24x?x?xf32>
// CHECK-NOT:     memref.copy
// CHECK:         memref.reshape %[[SAME]](%{{.+}}) : (memref<24x?x?xf32>, memref<4xi64>) -> memref<2x12x?x?xf32>
// CHECK-LABEL: func.func @written_after(
// CHECK:         %[[COPY:.+]] = memref.alloc
// CHECK:         memref.copy %{{.+}}, %[[COPY]]
// CHECK:         memref.reshape %[[COPY]]
