// torch-mlir's aten.max.dim: a row's maximum and its argmax in one generic. @row_max reads only the
// maximum (softmax's case: the argmax is dropped), @row_max_argmax reads both.
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_max(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %c0_i64 = arith.constant 0 : i64
  %e1 = tensor.empty(%n) : tensor<?xi64>
  %i = linalg.fill ins(%c0_i64 : i64) outs(%e1 : tensor<?xi64>) -> tensor<?xi64>
  %e2 = tensor.empty(%n) : tensor<?xf32>
  %m = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<?xf32>) -> tensor<?xf32>
  %r:2 = linalg.generic {indexing_maps = [#rows, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<?x?xf32>) outs(%m, %i : tensor<?xf32>, tensor<?xi64>) {
  ^bb0(%in: f32, %out: f32, %out_1: i64):
    %0 = linalg.index 1 : index
    %1 = arith.index_cast %0 : index to i64
    %2 = arith.maximumf %in, %out : f32
    %3 = arith.cmpf ogt, %in, %out : f32
    %4 = arith.select %3, %1, %out_1 : i64
    linalg.yield %2, %4 : f32, i64
  } -> (tensor<?xf32>, tensor<?xi64>)
  return %r#0 : tensor<?xf32>
}

func.func @row_max_argmax(%x: tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?xi64>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %c0_i64 = arith.constant 0 : i64
  %e1 = tensor.empty(%n) : tensor<?xi64>
  %i = linalg.fill ins(%c0_i64 : i64) outs(%e1 : tensor<?xi64>) -> tensor<?xi64>
  %e2 = tensor.empty(%n) : tensor<?xf32>
  %m = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<?xf32>) -> tensor<?xf32>
  %r:2 = linalg.generic {indexing_maps = [#rows, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<?x?xf32>) outs(%m, %i : tensor<?xf32>, tensor<?xi64>) {
  ^bb0(%in: f32, %out: f32, %out_1: i64):
    %0 = linalg.index 1 : index
    %1 = arith.index_cast %0 : index to i64
    %2 = arith.maximumf %in, %out : f32
    %3 = arith.cmpf ogt, %in, %out : f32
    %4 = arith.select %3, %1, %out_1 : i64
    linalg.yield %2, %4 : f32, i64
  } -> (tensor<?xf32>, tensor<?xi64>)
  return %r#0, %r#1 : tensor<?xf32>, tensor<?xi64>
}
