// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-outline-loop-nests | FileCheck %s

// Each top-level loop nest of a public function becomes a function of its own (LLVM optimizes each
// alone, in parallel units), taking the values it reads and marked to stay out of line.
func.func @twice(%x: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf32>
    %d = arith.addf %v, %v : f32
    memref.store %d, %out[%i] : memref<?xf32>
  }
  return
}

// CHECK-LABEL: func.func @twice(
// CHECK-SAME:      %[[X:[^:]+]]: memref<?xf32>, %[[OUT:[^:]+]]: memref<?xf32>)
// CHECK-NOT:     scf.for
// CHECK:         call @ftuner_outlined_twice_0(
// CHECK-NOT:     scf.for
// CHECK:         return
// CHECK-LABEL: func.func private @ftuner_outlined_twice_0(
// CHECK-SAME:      ftuner.outlined
// CHECK:         scf.for
// CHECK:           arith.addf
