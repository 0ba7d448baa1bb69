// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-lower-cpu | FileCheck %s

// f32 exp, erf and tanh become arithmetic (the loops vectorize); f64 keeps its libm call.
#map = affine_map<(d0) -> (d0)>
func.func @gelu_parts(%x: tensor<?xf32>, %y: tensor<?xf64>, %o: tensor<?xf32>, %p: tensor<?xf64>) -> (tensor<?xf32>, tensor<?xf64>) {
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<?xf32>) outs(%o : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    %t = math.tanh %e : f32
    %f = math.erf %t : f32
    linalg.yield %f : f32
  } -> tensor<?xf32>
  %s = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%y : tensor<?xf64>) outs(%p : tensor<?xf64>) {
  ^bb0(%in: f64, %out: f64):
    %f = math.erf %in : f64
    linalg.yield %f : f64
  } -> tensor<?xf64>
  return %r, %s : tensor<?xf32>, tensor<?xf64>
}
// CHECK-NOT: @expf
// CHECK-NOT: @tanhf
// CHECK-NOT: @erff
// CHECK-LABEL: llvm.func @gelu_parts
// CHECK: llvm.intr.fma
// CHECK: llvm.intr.floor
// CHECK: llvm.bitcast
// CHECK: llvm.call @erf(
// CHECK-NOT: @expf
// CHECK-NOT: @tanhf
// CHECK-NOT: @erff
