// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-destination-abi | FileCheck %s

// A public function takes its result's buffer as an argument (ftuner-report-failed-asserts adds the status): the input read as
// a tensor, the result materialized into the out buffer, the C interface emitted. Private functions
// keep their signature.
func.func @double(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %r = call @twice(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

func.func private @twice(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %r = arith.addf %x, %x : tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// CHECK-LABEL: func.func @double(
// CHECK-SAME:      %[[X:[^:]+]]: memref<?x4xf32>, %[[OUT:[^:]+]]: memref<?x4xf32>)
// CHECK-SAME:      llvm.emit_c_interface
// CHECK:         %[[T:.+]] = bufferization.to_tensor %[[X]] restrict
// CHECK:         %[[R:.+]] = call @twice(%[[T]])
// CHECK:         bufferization.materialize_in_destination %[[R]] in restrict writable %[[OUT]]
// CHECK:         return
// CHECK-NEXT:  }
// CHECK-LABEL: func.func private @twice(%{{[^:]+}}: tensor<?x4xf32>) -> tensor<?x4xf32>
