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

// An f32 division by a constant becomes a multiplication by its reciprocal (GELU's x / sqrt(2)); not
// by a variable, not by a constant whose reciprocal is not a normal f32, not in f64.
func.func @divisions(%x: f32, %y: f32, %z: f64) -> (f32, f32, f32, f64) {
  %sqrt2 = arith.constant 1.41421354 : f32
  %tiny = arith.constant 1.0e-39 : f32
  %c = arith.constant 3.0 : f64
  %a = arith.divf %x, %sqrt2 : f32
  %b = arith.divf %x, %y : f32
  %d = arith.divf %x, %tiny : f32
  %e = arith.divf %z, %c : f64
  return %a, %b, %d, %e : f32, f32, f32, f64
}

// CHECK-LABEL: func.func @divisions(
// CHECK-SAME:      %[[X:[^:]+]]: f32, %[[Y:[^:]+]]: f32, %[[Z:[^:]+]]: f64)
// CHECK-DAG:     %[[R:.+]] = arith.constant 0.707106769 : f32
// CHECK-DAG:     %[[A:.+]] = arith.mulf %[[X]], %[[R]] : f32
// CHECK-DAG:     %[[B:.+]] = arith.divf %[[X]], %[[Y]] : f32
// CHECK-DAG:     %[[D:.+]] = arith.divf %[[X]], %{{.+}} : f32
// CHECK-DAG:     %[[E:.+]] = arith.divf %[[Z]], %{{.+}} : f64
// CHECK:         return %[[A]], %[[B]], %[[D]], %[[E]] :
