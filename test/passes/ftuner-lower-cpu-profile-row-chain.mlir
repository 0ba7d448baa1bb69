// RUN: ftuner-opt %s --target=x86-avx512 '--pass-pipeline=builtin.module(ftuner-cpu-pipeline{profile=1})' | FileCheck %s

// Profile mode labels a row chain (lowering/loops/row_chains.py: a softmax's max, exp, sum and divide as one
// loop over rows) as one reduction site counting its ops, not by the first op of its serial branch
// (a layer norm's was bufferization's copy of a reduction's init: the chain read as a copy).
// CHECK:       module attributes {ftuner.profile_sites = "{{\[\[}}\22softmax\22, \22total\22
// CHECK-SAME:    [\22softmax\22, \22reduction\22, \22row chain of 4 ops in scf.if at {{[^ ]*}}:18:8\22]
// CHECK-NOT:     in scf.if at
// CHECK-SAME:    ]]"
func.func @softmax(%a: tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %b = tensor.dim %a, %c0 : tensor<?x4x?x?xf32>
  %t = tensor.dim %a, %c2 : tensor<?x4x?x?xf32>
  %s = tensor.dim %a, %c3 : tensor<?x4x?x?xf32>
  %e = tensor.empty(%b, %t, %s) : tensor<?x4x?x?xf32>
  %r = linalg.softmax dimension(3) ins(%a : tensor<?x4x?x?xf32>) outs(%e : tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  return %r : tensor<?x4x?x?xf32>
}
