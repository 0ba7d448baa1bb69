// RUN: ftuner-opt %s --split-input-file --target=x86-avx512 --ftuner-outline-loop-nests | FileCheck %s

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

// -----

// The second nest reads what the first yields: once the first is outlined it reads its call's result,
// passed in as an argument (no use of a value from outside its function).
func.func @chained(%x: memref<?xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %v = memref.load %x[%i] : memref<?xf32>
    %a = arith.addf %acc, %v : f32
    scf.yield %a : f32
  }
  %scaled = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %v = memref.load %x[%i] : memref<?xf32>
    %m = arith.mulf %v, %sum : f32
    %a = arith.addf %acc, %m : f32
    scf.yield %a : f32
  }
  return %scaled : f32
}

// CHECK-LABEL: func.func @chained(
// CHECK:         %[[SUM:.+]] = call @ftuner_outlined_chained_0(
// CHECK:         %[[SCALED:.+]] = call @ftuner_outlined_chained_1({{.*}}%[[SUM]]
// CHECK:         return %[[SCALED]]
// CHECK-LABEL: func.func private @ftuner_outlined_chained_0(
// CHECK-LABEL: func.func private @ftuner_outlined_chained_1(
// CHECK-SAME:      %[[S:[^:]+]]: f32
// CHECK:           arith.mulf %{{.+}}, %[[S]]
