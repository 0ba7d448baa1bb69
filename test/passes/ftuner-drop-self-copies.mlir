// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-drop-self-copies | FileCheck %s

// After bufferization a result computed in its out buffer is 'copied' onto itself through a
// memref.cast (canonicalization does not see through it): that copy goes; a copy from another buffer
// stays.
func.func @in_place(%x: memref<?xf32>, %out: memref<?xf32>) attributes {llvm.emit_c_interface} {
  %v = memref.cast %out : memref<?xf32> to memref<?xf32, strided<[?], offset: ?>>
  linalg.copy ins(%x : memref<?xf32>) outs(%v : memref<?xf32, strided<[?], offset: ?>>)
  memref.copy %v, %out : memref<?xf32, strided<[?], offset: ?>> to memref<?xf32>
  return
}

func.func @elsewhere(%x: memref<?xf32>, %out: memref<?xf32>) attributes {llvm.emit_c_interface} {
  memref.copy %x, %out : memref<?xf32> to memref<?xf32>
  return
}

// CHECK-LABEL: func.func @in_place(
// CHECK:         linalg.copy
// CHECK-NOT:     memref.copy
// CHECK:         return
// CHECK-LABEL: func.func @elsewhere(
// CHECK:         memref.copy %{{.+}}, %{{.+}} : memref<?xf32> to memref<?xf32>
