// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-destination-abi --ftuner-parallelize-generics --ftuner-compute-branches-in-outputs | FileCheck %s

// An elementwise result big enough to split over the cores is chosen by an scf.if (the forall, or the
// op itself for small sizes), both writing one tensor.empty: the result is computed in the function's
// out buffer (read as a restrict writable tensor) instead, so bufferization allocates nothing and copies
// nothing into the out buffer.
func.func @relu(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %x, %c0 : tensor<?x?xf32>
  %n = tensor.dim %x, %c1 : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %zero : f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @relu(
// CHECK-SAME:      %[[X:.+]]: memref<?x?xf32>, %[[OUT:.+]]: memref<?x?xf32>)
// CHECK-NOT:     tensor.empty
// CHECK:         %[[DEST:.+]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK:         %[[R:.+]] = scf.if
// CHECK:           scf.forall {{.*}} shared_outs(%{{.+}} = %[[DEST]])
// CHECK:         } else {
// CHECK:           linalg.generic {{.*}} outs(%[[DEST]] :
// CHECK:         bufferization.materialize_in_destination %[[R]] in restrict writable %[[OUT]]

// CSE merged the tensor.empty the result's branches write with one that other ops write (a model's
// layers): the result's branches get a copy of their own, computed in the out buffer; the other op
// keeps the shared one. (Before, the empty-tensor elimination gave the out buffer to one of the two
// branches, which one varying from run to run, and the other's result was allocated and copied.)
func.func @shared(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %x, %c0 : tensor<?x?xf32>
  %n = tensor.dim %x, %c1 : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %zero : f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %x : tensor<?x?xf32>, tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %v = arith.addf %in, %in2 : f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @shared(
// CHECK-SAME:      %[[X:.+]]: memref<?x?xf32>, %[[OUT:.+]]: memref<?x?xf32>)
// CHECK:         %[[DEST:.+]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK:         %[[E:.+]] = tensor.empty
// CHECK:         %[[A:.+]] = scf.if
// CHECK:           scf.forall {{.*}} shared_outs(%{{.+}} = %[[E]])
// CHECK:         } else {
// CHECK:           linalg.generic {{.*}} outs(%[[E]] :
// CHECK:         %[[R:.+]] = scf.if
// CHECK:           scf.forall {{.*}} shared_outs(%{{.+}} = %[[DEST]])
// CHECK:         } else {
// CHECK:           linalg.generic {{.*}} outs(%[[DEST]] :
// CHECK:         bufferization.materialize_in_destination %[[R]] in restrict writable %[[OUT]]
