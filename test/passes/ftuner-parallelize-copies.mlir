// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-parallelize-copies | FileCheck %s

// A copy an emitter marked (conv2d's im2col: ftuner.parallel_outer = its outer dims to split) runs as
// one task per index of those dims; an unmarked copy stays as it is.
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @marked(%x: tensor<?x?x8xf32>, %o: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<?x?x8xf32>) outs(%o : tensor<?x?x8xf32>) attrs = {ftuner.parallel_outer = 2 : i64} {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<?x?x8xf32>
  return %r : tensor<?x?x8xf32>
}

func.func @unmarked(%x: tensor<?x?x8xf32>, %o: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<?x?x8xf32>) outs(%o : tensor<?x?x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<?x?x8xf32>
  return %r : tensor<?x?x8xf32>
}

// CHECK-LABEL: func.func @marked(
// CHECK:         scf.forall (%[[I:.+]], %[[J:.+]]) in (%{{.+}}, %{{.+}}) shared_outs(
// CHECK:           tensor.extract_slice %{{.+}}[%[[I]], %[[J]], 0] [1, 1, 8] [1, 1, 1]
// CHECK:           linalg.generic
// CHECK:           tensor.parallel_insert_slice
// CHECK-LABEL: func.func @unmarked(
// CHECK-NOT:     scf.forall
// CHECK:         linalg.generic
// CHECK-NOT:     scf.forall
