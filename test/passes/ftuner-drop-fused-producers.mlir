// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-drop-fused-producers | FileCheck %s

// After elementwise fusion: the embedding gather (its ids checked by asserts) was copied into the sum
// that reads it, and the original is left unread. It goes; its fused copy keeps the checks.
// CHECK-LABEL: func.func @gather_fused_into_sum(
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0, %arg2 :
// CHECK: "index must be smaller than dim size"
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return
#ids = affine_map<(d0, d1) -> (d0)>
#rows = affine_map<(d0, d1) -> (d0, d1)>
func.func @gather_fused_into_sum(%ids: tensor<?xi64>, %table: tensor<7x16xf32>, %pos: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %c0 = arith.constant 0 : index
  %c7 = arith.constant 7 : index
  %n = tensor.dim %ids, %c0 : tensor<?xi64>
  %e = tensor.empty(%n) : tensor<?x16xf32>
  %dead = linalg.generic {indexing_maps = [#ids, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<?xi64>) outs(%e : tensor<?x16xf32>) {
  ^bb0(%id: i64, %out: f32):
    %i = arith.index_cast %id : i64 to index
    %j = linalg.index 1 : index
    %ok = arith.cmpi slt, %i, %c7 : index
    cf.assert %ok, "index must be smaller than dim size"
    %v = tensor.extract %table[%i, %j] : tensor<7x16xf32>
    linalg.yield %v : f32
  } -> tensor<?x16xf32>
  %sum = linalg.generic {indexing_maps = [#ids, #rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%ids, %pos : tensor<?xi64>, tensor<?x16xf32>) outs(%e : tensor<?x16xf32>) {
  ^bb0(%id: i64, %p: f32, %out: f32):
    %i = arith.index_cast %id : i64 to index
    %j = linalg.index 1 : index
    %ok = arith.cmpi slt, %i, %c7 : index
    cf.assert %ok, "index must be smaller than dim size"
    %v = tensor.extract %table[%i, %j] : tensor<7x16xf32>
    %s = arith.addf %v, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x16xf32>
  return %sum : tensor<?x16xf32>
}

// A generic whose result is read stays; so does an unread one whose body calls a function (a side
// effect of its own, not a check).
// CHECK-LABEL: func.func @read_or_calling(
// CHECK: linalg.generic
// CHECK: func.call @log
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: return
func.func private @log(f32)
func.func @read_or_calling(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x16xf32>
  %e = tensor.empty(%n) : tensor<?x16xf32>
  %called = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x16xf32>) outs(%e : tensor<?x16xf32>) {
  ^bb0(%a: f32, %out: f32):
    func.call @log(%a) : (f32) -> ()
    linalg.yield %a : f32
  } -> tensor<?x16xf32>
  %read = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x16xf32>) outs(%e : tensor<?x16xf32>) {
  ^bb0(%a: f32, %out: f32):
    %d = arith.addf %a, %a : f32
    linalg.yield %d : f32
  } -> tensor<?x16xf32>
  return %read : tensor<?x16xf32>
}
