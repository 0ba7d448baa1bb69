// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-keep-dispatch-calls | FileCheck %s

// A dispatch whose callers all pass contiguous buffers is called, not inlined: its signature gets the
// strides every caller agrees on (unit innermost, the rows' stride of a ?x64 buffer), each call passes
// casts of the roots, and the body sees its old types through casts. A dispatch called once with a
// strided column slice stays inlinable.
!strided = memref<?x?xf32, strided<[?, ?], offset: ?>>
func.func private @ftuner_dispatch_a(%a: !strided, %c: !strided) attributes {ftuner.dispatch = "matmul"} {
  linalg.copy ins(%a : !strided) outs(%c : !strided)
  return
}

func.func private @ftuner_dispatch_b(%a: !strided, %c: !strided) attributes {ftuner.dispatch = "matmul"} {
  linalg.copy ins(%a : !strided) outs(%c : !strided)
  return
}

func.func @caller(%x: memref<?x64xf32>, %y: memref<?x64xf32>, %w: memref<?x128xf32>) {
  %xa = memref.cast %x : memref<?x64xf32> to !strided
  %ya = memref.cast %y : memref<?x64xf32> to !strided
  call @ftuner_dispatch_a(%xa, %ya) : (!strided, !strided) -> ()
  %c0 = arith.constant 0 : index
  %n = memref.dim %w, %c0 : memref<?x128xf32>
  %cols = memref.subview %w[0, 0] [%n, 64] [1, 2] : memref<?x128xf32> to memref<?x64xf32, strided<[128, 2]>>
  %ca = memref.cast %cols : memref<?x64xf32, strided<[128, 2]>> to !strided
  call @ftuner_dispatch_b(%xa, %ca) : (!strided, !strided) -> ()
  return
}

// CHECK-LABEL: func.func private @ftuner_dispatch_a(
// CHECK-SAME:      %[[A:[^:]+]]: memref<?x?xf32, strided<[64, 1], offset: ?>>, %[[C:[^:]+]]: memref<?x?xf32, strided<[64, 1], offset: ?>>)
// CHECK-DAG:     memref.cast %[[A]] : memref<?x?xf32, strided<[64, 1], offset: ?>> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK-DAG:     memref.cast %[[C]] : memref<?x?xf32, strided<[64, 1], offset: ?>> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK-LABEL: func.func private @ftuner_dispatch_b(
// CHECK-SAME:      memref<?x?xf32, strided<[?, ?], offset: ?>>, %{{[^:]+}}: memref<?x?xf32, strided<[?, ?], offset: ?>>)
// CHECK-LABEL: func.func @caller(
// CHECK-SAME:      %[[X:[^:]+]]: memref<?x64xf32>, %[[Y:[^:]+]]: memref<?x64xf32>
// CHECK-DAG:     %[[XC:.+]] = memref.cast %[[X]] : memref<?x64xf32> to memref<?x?xf32, strided<[64, 1], offset: ?>>
// CHECK-DAG:     %[[YC:.+]] = memref.cast %[[Y]] : memref<?x64xf32> to memref<?x?xf32, strided<[64, 1], offset: ?>>
// CHECK:         call @ftuner_dispatch_a(%[[XC]], %[[YC]]) {no_inline}
// CHECK:         call @ftuner_dispatch_b(%{{.+}}, %{{.+}}) :
// CHECK-NOT:     no_inline
