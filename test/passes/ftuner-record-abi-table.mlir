// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-record-abi-table | FileCheck %s

// The library describes its public functions' buffers itself, as the C string @ftuner_abi
// "scale(?x4:32,?x4:32,:32);pack(2x3:16,6:8)": dims and element bits of every argument (the status
// too; i1 counts as a byte). The loader refuses a manifest that does not match it. A public helper
// without the C interface (the profile clock) is not listed.
func.func @scale(%x: memref<?x4xf32>, %out: memref<?x4xf32>, %status: memref<i32>) attributes {llvm.emit_c_interface} {
  return
}

func.func @pack(%x: memref<2x3xbf16>, %m: memref<6xi1>) attributes {llvm.emit_c_interface} {
  return
}

func.func @helper(%i: index) -> f64 {
  %z = arith.constant 0.0 : f64
  return %z : f64
}

// CHECK: memref.global constant @ftuner_abi : memref<42xi8> = dense<[115, 99, 97, 108, 101, 40, 63, 120, 52, 58, 51, 50, 44, 63, 120, 52, 58, 51, 50, 44, 58, 51, 50, 41, 59, 112, 97, 99, 107, 40, 50, 120, 51, 58, 49, 54, 44, 54, 58, 56, 41, 0]>
