// A failed cf.assert is stored into the call's status, a trailing memref<i32> argument of the public
// function threaded into every function that reaches an assert (here the outlined loop nest): no
// global flag that concurrent calls would share, no abort().
// RUN: ftuner-opt %s --ftuner-lower-cpu="num-threads=1" | FileCheck %s

// CHECK: module attributes {ftuner.asserts = ["index must be smaller than dim size ({{.*}}:{{[0-9]+}}:5)", "index must be larger or equal to 0 ({{.*}}:{{[0-9]+}}:5)"]
// The library's own table of its buffers, "gather(5x3:32,?:64,?x3:32,:32)" (runtime/loader.py checks
// module.json against it); no other global: no shared flag.
// CHECK: llvm.mlir.global external constant @ftuner_abi(dense<[103, 97, 116, 104, 101, 114, 40, 53, 120, 51, 58, 51, 50, 44, 63, 58, 54, 52, 44, 63, 120, 51, 58, 51, 50, 44, 58, 51, 50, 41, 0]>
// CHECK-NOT: llvm.mlir.global
// CHECK-NOT: llvm.call @abort
// The public function: table, ids, the result, then the status descriptor (allocated, aligned, offset).
// CHECK-LABEL: llvm.func @gather(
// CHECK-SAME: %[[ALLOC:arg19]]: !llvm.ptr, %[[ALIGNED:arg20]]: !llvm.ptr, %arg21: i64)
// CHECK: llvm.insertvalue %[[ALLOC]], %{{.*}}[0] : !llvm.struct<(ptr, ptr, i64)>
// CHECK: llvm.insertvalue %[[ALIGNED]], %{{.*}}[1] : !llvm.struct<(ptr, ptr, i64)>
// CHECK: llvm.call @ftuner_outlined_gather_0({{.*}}) : ({{.*}}, !llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK-LABEL: llvm.func @_mlir_ciface_gather(%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: !llvm.ptr, %arg3: !llvm.ptr)
// CHECK-LABEL: llvm.func internal @ftuner_outlined_gather_0(
// CHECK-SAME: %[[STATUS:arg[0-9]+]]: !llvm.ptr, %{{arg[0-9]+}}: i64) attributes
// The first failure of a call wins: load the status, keep it unless it is 0.
// CHECK: %[[EARLIER:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i32
// CHECK: %[[NUMBER:.*]] = llvm.select %{{.*}}, %{{.*}}, %[[EARLIER]] : i1, i32
// CHECK: llvm.store %[[NUMBER]], %{{.*}} : i32, !llvm.ptr
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> i32
// CHECK: llvm.store %{{.*}}, %{{.*}} : i32, !llvm.ptr
func.func @gather(%table: tensor<5x3xf32>, %ids: tensor<?xi64>) -> tensor<?x3xf32> {
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0 : i64
  %n = tensor.dim %ids, %c0 : tensor<?xi64>
  %e = tensor.empty(%n) : tensor<?x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<?xi64>) outs(%e : tensor<?x3xf32>) {
  ^bb0(%id: i64, %o: f32):
    %i = arith.index_cast %id : i64 to index
    %j = linalg.index 1 : index
    %lt = arith.cmpi slt, %i, %c5 : index
    cf.assert %lt, "index must be smaller than dim size"
    %ge = arith.cmpi sge, %id, %zero : i64
    cf.assert %ge, "index must be larger or equal to 0"
    %v = tensor.extract %table[%i, %j] : tensor<5x3xf32>
    linalg.yield %v : f32
  } -> tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}
