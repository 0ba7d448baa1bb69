// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-skip-identity-broadcasts | FileCheck %s

// torch-mlir's dynamic broadcast (a gather reading src[i, select(X == 1, 0, j), k]) is skipped when it
// is a copy: scf.if (src's dims are the result's, X != 1) yields src itself, else the gather runs.
func.func @expand(%src: tensor<4x?x8xf32>, %n: tensor<?xf32>) -> tensor<4x?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x = tensor.dim %src, %c1 : tensor<4x?x8xf32>
  %d = tensor.dim %n, %c0 : tensor<?xf32>
  %e = tensor.empty(%d) : tensor<4x?x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} outs(%e : tensor<4x?x8xf32>) {
  ^bb0(%out: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %b = arith.cmpi eq, %x, %c1 : index
    %s = arith.select %b, %c0, %i1 : index
    %v = tensor.extract %src[%i0, %s, %i2] : tensor<4x?x8xf32>
    linalg.yield %v : f32
  } -> tensor<4x?x8xf32>
  return %r : tensor<4x?x8xf32>
}

// Not a broadcast (the index is j + 1, a shift): left alone.
func.func @shift(%src: tensor<?xf32>, %n: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d = tensor.dim %n, %c0 : tensor<?xf32>
  %e = tensor.empty(%d) : tensor<?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e : tensor<?xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = arith.addi %i, %c1 : index
    %v = tensor.extract %src[%j] : tensor<?xf32>
    linalg.yield %v : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// CHECK-LABEL: func.func @expand(
// CHECK-SAME:      %[[SRC:[^:]+]]: tensor<4x?x8xf32>
// CHECK:         %[[SIZE:.+]] = tensor.dim %[[SRC]], %{{.*}} : tensor<4x?x8xf32>
// CHECK:         %[[SAME:.+]] = arith.cmpi eq, %{{.*}}, %{{.*}} : index
// CHECK:         %[[NOT_ONE:.+]] = arith.cmpi ne, %[[SIZE]], %{{.*}} : index
// CHECK:         %[[OK:.+]] = scf.if %{{.*}} -> (tensor<4x?x8xf32>) {
// CHECK-NEXT:      scf.yield %[[SRC]] : tensor<4x?x8xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[G:.+]] = linalg.generic
// CHECK:             tensor.extract %[[SRC]]
// CHECK:           scf.yield %[[G]] : tensor<4x?x8xf32>
// CHECK-LABEL: func.func @shift(
// CHECK-NOT:     scf.if
// CHECK:         linalg.generic
// CHECK:         tensor.extract
// CHECK-NOT:     scf.if
