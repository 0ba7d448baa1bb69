// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-decompose-aggregates | FileCheck %s

// linalg.softmax becomes its parts: the row maximum, exp(x - max), the row sum, and each row divided by
// its sum (a multiplication by the sum's reciprocal once the row is vector code: ftuner-fuse-row-chains).
func.func @softmax(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %r = linalg.softmax dimension(1) ins(%x : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// CHECK-LABEL: func.func @softmax(
// CHECK-NOT:     linalg.softmax
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK:           arith.maxnumf
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK:           arith.subf
// CHECK:           math.exp
// CHECK:         %[[SUM:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK:           arith.addf
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}}ins(%{{.*}}, %[[SUM]] :
// CHECK-NEXT:    ^bb0(%[[E:.+]]: f32, %[[S:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:      %[[Y:.+]] = arith.divf %[[E]], %[[S]] : f32
// CHECK-NEXT:      linalg.yield %[[Y]] : f32
// CHECK-NOT:     linalg.softmax
