// RUN: ftuner-opt %s --target=intel-spr --ftuner-cpu-pipeline | FileCheck %s

// bf16 data moved without arithmetic (a transpose, a scalar copy loop): in the LLVM dialect every load
// and store of bf16 is one of i16 (lowering/llvm/bf16_memory.py). The x86 backend carries a bf16 vector it
// cannot move as such through fp32 and truncates it back by calling __truncsfbf2, which libgcc lacks.
func.func @moved(%x: tensor<?x5x?xbf16>) -> tensor<?x?x5xbf16> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %a = tensor.dim %x, %c0 : tensor<?x5x?xbf16>
  %b = tensor.dim %x, %c2 : tensor<?x5x?xbf16>
  %e = tensor.empty(%a, %b) : tensor<?x?x5xbf16>
  %t = linalg.transpose ins(%x : tensor<?x5x?xbf16>) outs(%e : tensor<?x?x5xbf16>) permutation = [0, 2, 1]
  return %t : tensor<?x?x5xbf16>
}

// CHECK-LABEL: llvm.func @moved(
// CHECK-NOT:     -> bf16
// CHECK-NOT:     -> vector<{{[0-9]+}}xbf16>
// CHECK-NOT:     : bf16, !llvm.ptr
// CHECK-NOT:     : vector<{{[0-9]+}}xbf16>, !llvm.ptr
// CHECK:         llvm.load {{.*}} -> {{(vector<[0-9]+x)?}}i16
// CHECK:         llvm.store {{.*}} : {{(vector<[0-9]+x)?}}i16, !llvm.ptr
