// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-store-i1-as-i8 | FileCheck %s

// A boolean buffer (a mask kept in memory) is stored as bytes: the buffer is i8, a store widens the
// bit, a load truncates the byte. MLIR 22's MemRefToLLVM asserts on sub-byte elements.
func.func @mask(%x: memref<?xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.alloc(%n) : memref<?xi1>
  %v = memref.load %x[%c0] : memref<?xf32>
  %b = arith.cmpf ogt, %v, %zero : f32
  memref.store %b, %m[%c0] : memref<?xi1>
  %r = memref.load %m[%c0] : memref<?xi1>
  %s = arith.select %r, %v, %zero : f32
  memref.dealloc %m : memref<?xi1>
  return %s : f32
}

// CHECK-LABEL: func.func @mask(
// CHECK-NOT:     memref<?xi1>
// CHECK:         %[[M:.+]] = memref.alloc(%{{.+}}) : memref<?xi8>
// CHECK:         %[[B:.+]] = arith.cmpf ogt
// CHECK:         %[[BYTE:.+]] = arith.extui %[[B]] : i1 to i8
// CHECK:         memref.store %[[BYTE]], %[[M]][%{{.+}}] : memref<?xi8>
// CHECK:         %[[R:.+]] = memref.load %[[M]][%{{.+}}] : memref<?xi8>
// CHECK:         %[[BIT:.+]] = arith.trunci %[[R]] : i8 to i1
// CHECK:         arith.select %[[BIT]]
// CHECK-NOT:     memref<?xi1>

// A mask's row read as a vector (row_vectors.py): the bytes are read (the padding widened) and the
// vector truncated back to i1.
func.func @mask_row(%m: memref<?xi1>, %x: vector<16xf32>, %y: vector<16xf32>) -> vector<16xf32> {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %bits = vector.transfer_read %m[%c0], %false {in_bounds = [true]} : memref<?xi1>, vector<16xi1>
  %r = arith.select %bits, %x, %y : vector<16xi1>, vector<16xf32>
  return %r : vector<16xf32>
}

// CHECK-LABEL: func.func @mask_row(
// CHECK-SAME:    %[[M:.+]]: memref<?xi8>
// CHECK:         %[[PAD:.+]] = arith.extui %{{.+}} : i1 to i8
// CHECK:         %[[BYTES:.+]] = vector.transfer_read %[[M]][%{{.+}}], %[[PAD]] {{.*}} : memref<?xi8>, vector<16xi8>
// CHECK:         %[[BITS:.+]] = arith.trunci %[[BYTES]] : vector<16xi8> to vector<16xi1>
// CHECK:         arith.select %[[BITS]]
