// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-split-empty-tensors | FileCheck %s

// CSE merged the empty tensor (and its cast) ten users write into. Runs of 8 consecutive users keep
// sharing one (bufferization writes them in place into one buffer); the rest get a clone, so no alias
// set spans the whole model. The branches of one scf.if (a dispatch versioned on a test) are one user.
func.func private @writes(%x: tensor<?x?xf32>, %out: tensor<?x?xf32>) -> tensor<?x?xf32>

func.func @ten_layers(%x: tensor<?x?xf32>, %flag: i1) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %empty = tensor.empty(%n) : tensor<4x?xf32>
  %cast = tensor.cast %empty : tensor<4x?xf32> to tensor<?x?xf32>
  %l1 = func.call @writes(%x, %cast) : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %l2 = func.call @writes(%l1, %cast) : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %l3 = func.call @writes(%l2, %cast) : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %l4 = func.call @writes(%l3, %cast) : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %l5 = func.call @writes(%l4, %cast) : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %l6 = func.call @writes(%l5, %cast) : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %l7 = func.call @writes(%l6, %cast) : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %l8 = func.call @writes(%l7, %cast) : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %l9 = func.call @writes(%l8, %cast) : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %l10 = scf.if %flag -> tensor<?x?xf32> {
    %a = func.call @writes(%l9, %cast) : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    scf.yield %a : tensor<?x?xf32>
  } else {
    %b = func.call @writes(%l8, %cast) : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    scf.yield %b : tensor<?x?xf32>
  }
  return %l10 : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @ten_layers(
// CHECK-COUNT-2: tensor.empty
// CHECK-NOT:     tensor.empty
// CHECK:         %[[LATE:.+]] = tensor.cast
// CHECK-NEXT:    %[[EARLY:.+]] = tensor.cast
// CHECK-NOT:     tensor.cast
// CHECK-COUNT-8: call @writes(%{{.+}}, %[[EARLY]])
// CHECK-NEXT:    call @writes(%{{.+}}, %[[LATE]])
// CHECK-NEXT:    scf.if
// CHECK-NEXT:      call @writes(%{{.+}}, %[[LATE]])
// CHECK:         } else {
// CHECK-NEXT:      call @writes(%{{.+}}, %[[LATE]])
