// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-report-failed-asserts | FileCheck %s

// A public function with asserts takes a status buffer after its other arguments; a failing assert
// stores its number there (the first failure wins) instead of aborting, and the module keeps the
// messages. The status is threaded through the private function that reaches the assert.
func.func @check(%n: index, %out: memref<f32>) {
  call @inner(%n) : (index) -> ()
  return
}

func.func private @inner(%n: index) {
  %c5 = arith.constant 5 : index
  %ok = arith.cmpi ult, %n, %c5 : index
  cf.assert %ok, "index must be smaller than dim size"
  return
}

// CHECK:       module attributes {ftuner.asserts = ["index must be smaller than dim size{{.*}}"]}
// CHECK-LABEL: func.func @check(
// CHECK-SAME:      %{{[^:]+}}: index, %{{[^:]+}}: memref<f32>, %[[STATUS:[^:]+]]: memref<i32>)
// CHECK:         call @inner(%{{.+}}, %[[STATUS]]) : (index, memref<i32>) -> ()
// CHECK-LABEL: func.func private @inner(
// CHECK-SAME:      %{{[^:]+}}: index, %[[S:[^:]+]]: memref<i32>)
// CHECK-NOT:     cf.assert
// CHECK:         %[[FAILED:.+]] = arith.xori %{{.+}}, %true : i1
// CHECK:         scf.if %[[FAILED]] {
// CHECK:           %[[EARLIER:.+]] = memref.load %[[S]][] : memref<i32>
// CHECK:           %[[FIRST:.+]] = arith.cmpi eq, %[[EARLIER]], %{{.+}} : i32
// CHECK:           %[[NUMBER:.+]] = arith.select %[[FIRST]], %c1_i32, %[[EARLIER]] : i32
// CHECK:           memref.store %[[NUMBER]], %[[S]][] : memref<i32>
// CHECK-NOT:     cf.assert
