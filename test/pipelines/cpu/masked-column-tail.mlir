// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-cpu-pipeline | FileCheck %s

// The last columns of a block (fewer than 16) run in one masked uKernel per row size: in the LLVM
// dialect, the 8 rows of C, then each B row, as masked vector loads and stores of 16 lanes under one mask, and 16-lane FMAs on a broadcast
// A element; A's element is read without the clamp data-dependent extracts get (no smax/smin).
func.func @matmul(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// CHECK-LABEL: llvm.func @ftuner_dispatch_matmul_8x32_
// CHECK:         %[[MASK:.*]] = llvm.icmp "sgt" %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK-COUNT-8: llvm.intr.masked.load %{{.*}}, %[[MASK]], %{{.*}} : (!llvm.ptr, vector<16xi1>, vector<16xf32>) -> vector<16xf32>
// CHECK:         %[[B:.*]] = llvm.intr.masked.load %{{.*}}, %[[MASK]], %{{.*}} : (!llvm.ptr, vector<16xi1>, vector<16xf32>) -> vector<16xf32>
// CHECK-NOT:     llvm.intr.smax
// CHECK:         %[[A:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<1xf32>
// CHECK:         %[[S:.*]] = llvm.shufflevector %{{.*}} [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] : vector<16xf32>
// CHECK:         llvm.intr.fmuladd(%[[S]], %[[B]], %{{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK:         llvm.intr.masked.store %{{.*}}, %{{.*}}, %[[MASK]] {{.*}} : vector<16xf32>, vector<16xi1> into !llvm.ptr
