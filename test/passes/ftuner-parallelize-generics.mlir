// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-parallelize-generics | FileCheck %s
// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-parallelize-generics=num-threads=1 | FileCheck %s --check-prefix=SEQ

// An elementwise op and a row reduction with at least 32768 points run over the cores: scf.if chooses
// at run time between an scf.forall over the rows (the leading parallel dims; the innermost dim whole,
// as vector code) and the op as it was. One thread: nothing changes.
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
func.func @bias_gelu(%x: tensor<?x?x768xf32>, %o: tensor<?x?x768xf32>) -> tensor<?x?x768xf32> {
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<?x?x768xf32>) outs(%o : tensor<?x?x768xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.erf %in : f32
    linalg.yield %e : f32
  } -> tensor<?x?x768xf32>
  return %r : tensor<?x?x768xf32>
}
func.func @row_sum(%x: tensor<?x?x768xf32>, %o: tensor<?x?x1xf32>) -> tensor<?x?x1xf32> {
  %r = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<?x?x768xf32>) outs(%o : tensor<?x?x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<?x?x1xf32>
  return %r : tensor<?x?x1xf32>
}

#ids = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @embedding(%ids: tensor<?x?xi64>, %table: tensor<1000x67xf32>, %o: tensor<?x?x67xf32>) -> tensor<?x?x67xf32> {
  %c0 = arith.constant 0 : index
  %c999 = arith.constant 999 : index
  %c1000 = arith.constant 1000 : index
  %c66 = arith.constant 66 : index
  %r = linalg.generic {indexing_maps = [#ids, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids : tensor<?x?xi64>) outs(%o : tensor<?x?x67xf32>) {
  ^bb0(%id: i64, %out: f32):
    %row = arith.index_cast %id : i64 to index
    %k = linalg.index 2 : index
    %in_table = arith.cmpi slt, %row, %c1000 : index
    cf.assert %in_table, "index must be smaller than dim size"
    %r0 = arith.maxsi %row, %c0 : index
    %r1 = arith.minsi %r0, %c999 : index
    %k0 = arith.maxsi %k, %c0 : index
    %k1 = arith.minsi %k0, %c66 : index
    %v = tensor.extract %table[%r1, %k1] : tensor<1000x67xf32>
    linalg.yield %v : f32
  } -> tensor<?x?x67xf32>
  return %r : tensor<?x?x67xf32>
}

// CHECK-LABEL: func.func @bias_gelu(
// CHECK:         %[[BIG:.+]] = arith.cmpi uge, %{{.+}}, %c32768{{.*}} : index
// CHECK:         scf.if %[[BIG]] -> (tensor<?x?x768xf32>) {
// CHECK:           scf.forall (%{{.+}}, %{{.+}}) in (%{{.+}}, %{{.+}}) shared_outs(
// CHECK:             tensor.extract_slice %{{.+}} [1, 1, 768] [1, 1, 1]
// CHECK:             math.erf %{{.+}} : vector<16xf32>
// CHECK:         } else {
// CHECK:           linalg.generic
// CHECK:             math.erf %{{.+}} : f32
// CHECK-LABEL: func.func @row_sum(
// CHECK:         scf.if %{{.+}} -> (tensor<?x?x1xf32>) {
// CHECK:           scf.forall (%{{.+}}, %{{.+}}) in (%{{.+}}, %{{.+}}) shared_outs(
// CHECK:             vector.reduction <add>
// CHECK:         } else {
// CHECK:           linalg.generic {{.*}}"reduction"
// An embedding lookup (the row index clamped into the table, as ftuner-clamp-extract-indices leaves it;
// the id checked by an assert, as torch-mlir writes it) reads each table row as vectors, 4 whole and a
// masked rest of 3; the id is checked once per row, before the row's loop.
// CHECK-LABEL: func.func @embedding(
// CHECK:         scf.if %{{.+}} -> (tensor<?x?x67xf32>) {
// CHECK:           scf.forall (%{{.+}}, %{{.+}}) in (%{{.+}}, %{{.+}}) shared_outs(
// CHECK:             cf.assert %{{.+}}, "index must be smaller than dim size"
// CHECK-NOT:         cf.assert
// CHECK:             %[[ROW:.+]] = arith.minsi %{{.+}}, %c999
// CHECK:             scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step %c16
// CHECK:               vector.transfer_read %arg1[%[[ROW]], %[[K]]], %{{.+}} : tensor<1000x67xf32>, vector<16xf32>
// CHECK:             vector.transfer_read %arg1[%[[ROW]], %{{.+}}], %{{.+}}, %{{.+}} {{.*}} : tensor<1000x67xf32>, vector<16xf32>
// CHECK-NOT:         cf.assert
// CHECK:         } else {
// CHECK:           linalg.generic
// CHECK:             tensor.extract %arg1
// SEQ-NOT:     scf.forall
// SEQ-NOT:     scf.if
