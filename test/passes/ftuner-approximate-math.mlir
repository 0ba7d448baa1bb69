// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-approximate-math | FileCheck %s

// f32 exp, erf and tanh become polynomials (fma, floor: LLVM intrinsics) (a libm call would keep the loop scalar);
// x^3 by a constant power becomes two multiplications. f64 keeps its libm call.
func.func @f32_math(%x: f32) -> (f32, f32, f32, f32) {
  %c3 = arith.constant 3 : i32
  %e = math.exp %x : f32
  %r = math.erf %x : f32
  %t = math.tanh %x : f32
  %p = math.fpowi %x, %c3 : f32, i32
  return %e, %r, %t, %p : f32, f32, f32, f32
}

func.func @f64_exp(%x: f64) -> f64 {
  %e = math.exp %x : f64
  return %e : f64
}

// CHECK-LABEL: func.func @f32_math(
// CHECK-SAME:      %[[X:[^:]+]]: f32)
// CHECK-NOT:     math.exp
// CHECK-NOT:     math.erf
// CHECK-NOT:     math.tanh
// CHECK-NOT:     math.fpowi
// CHECK:         math.floor
// CHECK:         math.fma
// CHECK:         %[[SQ:.+]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK:         %[[CUBE:.+]] = arith.mulf %[[X]], %[[SQ]] : f32
// CHECK:         return %{{.+}}, %{{.+}}, %{{.+}}, %[[CUBE]] : f32, f32, f32, f32
// CHECK-LABEL: func.func @f64_exp(
// CHECK:         math.exp %{{.+}} : f64
