// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-split-empty-tensors | FileCheck %s

// CSE merged the empty tensors (and their casts) two layers write into: each writer gets its own, so
// bufferization does not give them one buffer (and copy the first result out before the second
// writes). The branches of one scf.if (a dispatch versioned on a test) keep sharing theirs.
func.func private @writes(%x: tensor<?x?xf32>, %out: tensor<?x?xf32>) -> tensor<?x?xf32>

func.func @two_layers(%x: tensor<?x?xf32>, %flag: i1) -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %empty = tensor.empty(%n) : tensor<4x?xf32>
  %cast = tensor.cast %empty : tensor<4x?xf32> to tensor<?x?xf32>
  %first = func.call @writes(%x, %cast) : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %second = func.call @writes(%first, %cast) : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %third = scf.if %flag -> tensor<?x?xf32> {
    %a = func.call @writes(%second, %cast) : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    scf.yield %a : tensor<?x?xf32>
  } else {
    %b = func.call @writes(%first, %cast) : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    scf.yield %b : tensor<?x?xf32>
  }
  return %first, %second, %third : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>
}

// CHECK-LABEL: func.func @two_layers(
// CHECK-COUNT-3: tensor.empty
// CHECK-NOT:     tensor.empty
// CHECK:         %[[CA:.+]] = tensor.cast
// CHECK-NEXT:    %[[CB:.+]] = tensor.cast
// CHECK-NEXT:    %[[CC:.+]] = tensor.cast
// CHECK-NOT:     tensor.cast
// CHECK:         %[[FIRST:.+]] = call @writes(%{{.+}}, %[[CB]])
// CHECK-NEXT:    %[[SECOND:.+]] = call @writes(%[[FIRST]], %[[CA]])
// CHECK:         scf.if
// CHECK-NEXT:      call @writes(%[[SECOND]], %[[CC]])
// CHECK:         } else {
// CHECK-NEXT:      call @writes(%[[FIRST]], %[[CC]])
