// RUN: ftuner-opt %s --split-input-file --target=x86-avx512 --ftuner-outline-row-kernels | FileCheck %s

// Two layers' row kernels (an scf.if choosing a parallel or a serial loop, yielding the buffer it
// wrote) with other buffers and weights: one private function, called twice with each layer's buffers;
// the callers read the buffers they passed (the function returns nothing); scalar constants are
// cloned in, a weight is passed.
memref.global "private" constant @w0 : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
memref.global "private" constant @w1 : memref<4xf32> = dense<[5.0, 6.0, 7.0, 8.0]>
func.func @layers(%x: memref<?x4xf32>, %big: i1, %out: memref<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  %n = memref.dim %x, %c0 : memref<?x4xf32>
  %w0 = memref.get_global @w0 : memref<4xf32>
  %w1 = memref.get_global @w1 : memref<4xf32>
  %a = memref.alloc(%n) : memref<?x4xf32>
  %r0 = scf.if %big -> memref<?x4xf32> {
    scf.forall (%i) in (%n) {
      scf.for %j = %c0 to %c1 step %c1 {
        %v = memref.load %x[%i, %j] : memref<?x4xf32>
        %w = memref.load %w0[%j] : memref<4xf32>
        %m = arith.mulf %v, %w : f32
        %d = arith.mulf %m, %two : f32
        memref.store %d, %a[%i, %j] : memref<?x4xf32>
      }
    }
    scf.yield %a : memref<?x4xf32>
  } else {
    scf.for %i = %c0 to %n step %c1 {
      scf.for %j = %c0 to %c1 step %c1 {
        %v = memref.load %x[%i, %j] : memref<?x4xf32>
        %w = memref.load %w0[%j] : memref<4xf32>
        %m = arith.mulf %v, %w : f32
        %d = arith.mulf %m, %two : f32
        memref.store %d, %a[%i, %j] : memref<?x4xf32>
      }
    }
    scf.yield %a : memref<?x4xf32>
  }
  %r1 = scf.if %big -> memref<?x4xf32> {
    scf.forall (%i) in (%n) {
      scf.for %j = %c0 to %c1 step %c1 {
        %v = memref.load %r0[%i, %j] : memref<?x4xf32>
        %w = memref.load %w1[%j] : memref<4xf32>
        %m = arith.mulf %v, %w : f32
        %d = arith.mulf %m, %two : f32
        memref.store %d, %out[%i, %j] : memref<?x4xf32>
      }
    }
    scf.yield %out : memref<?x4xf32>
  } else {
    scf.for %i = %c0 to %n step %c1 {
      scf.for %j = %c0 to %c1 step %c1 {
        %v = memref.load %r0[%i, %j] : memref<?x4xf32>
        %w = memref.load %w1[%j] : memref<4xf32>
        %m = arith.mulf %v, %w : f32
        %d = arith.mulf %m, %two : f32
        memref.store %d, %out[%i, %j] : memref<?x4xf32>
      }
    }
    scf.yield %out : memref<?x4xf32>
  }
  %last = memref.load %r1[%c0, %c0] : memref<?x4xf32>
  memref.store %last, %out[%c0, %c1] : memref<?x4xf32>
  return
}

// CHECK-LABEL: func.func @layers(
// CHECK-SAME:      %[[X:[^:]+]]: memref<?x4xf32>, %[[BIG:[^:]+]]: i1, %[[OUT:[^:]+]]: memref<?x4xf32>)
// CHECK-DAG:     %[[W0:.+]] = memref.get_global @w0
// CHECK-DAG:     %[[W1:.+]] = memref.get_global @w1
// CHECK:         %[[A:.+]] = memref.alloc
// CHECK-NOT:     scf.if
// CHECK:         call @[[KERNEL:ftuner_kernel_layers_0]](%[[BIG]], {{.*}}%[[X]], %[[W0]], %[[A]]) : ({{.*}}) -> ()
// CHECK-NOT:     scf.if
// CHECK:         call @[[KERNEL]](%[[BIG]], {{.*}}%[[A]], %[[W1]], %[[OUT]]) : ({{.*}}) -> ()
// CHECK:         memref.load %[[OUT]]
// CHECK-NOT:     func.func private @ftuner_kernel_layers_1(
// CHECK-LABEL: func.func private @ftuner_kernel_layers_0(
// CHECK-SAME:      ftuner.outlined
// CHECK:         arith.constant 2.0
// CHECK:         scf.if
// CHECK:           scf.forall
// CHECK:         } else {
// CHECK:         return{{$}}

// -----

// A branch yields a buffer it allocated itself: the kernel stays in place.
func.func @fresh(%x: memref<?xf32>, %big: i1) -> f32 {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %r = scf.if %big -> memref<?xf32> {
    %b = memref.alloc(%n) : memref<?xf32>
    memref.copy %x, %b : memref<?xf32> to memref<?xf32>
    scf.yield %b : memref<?xf32>
  } else {
    scf.yield %x : memref<?xf32>
  }
  %v = memref.load %r[%c0] : memref<?xf32>
  return %v : f32
}

// CHECK-LABEL: func.func @fresh(
// CHECK:         scf.if
// CHECK-NOT:     call
// CHECK-NOT:     func.func private @ftuner_kernel_fresh
