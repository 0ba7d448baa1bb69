// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-merge-identical-functions | FileCheck %s

// Two private functions with the same body (an epilogue copy made per layer) become one: calls to the
// second call the first. A function whose body differs stays.
func.func private @scale_a(%x: f32) -> f32 {
  %c = arith.constant 2.0 : f32
  %r = arith.mulf %x, %c : f32
  return %r : f32
}

func.func private @scale_b(%x: f32) -> f32 {
  %c = arith.constant 2.0 : f32
  %r = arith.mulf %x, %c : f32
  return %r : f32
}

func.func private @scale_c(%x: f32) -> f32 {
  %c = arith.constant 3.0 : f32
  %r = arith.mulf %x, %c : f32
  return %r : f32
}

func.func @main(%x: f32) -> (f32, f32, f32) {
  %a = call @scale_a(%x) : (f32) -> f32
  %b = call @scale_b(%x) : (f32) -> f32
  %c = call @scale_c(%x) : (f32) -> f32
  return %a, %b, %c : f32, f32, f32
}

// CHECK-LABEL: func.func private @scale_a(
// CHECK-NOT:   func.func private @scale_b(
// CHECK-LABEL: func.func private @scale_c(
// CHECK-LABEL: func.func @main(
// CHECK:         call @scale_a(
// CHECK-NEXT:    call @scale_a(
// CHECK-NEXT:    call @scale_c(
