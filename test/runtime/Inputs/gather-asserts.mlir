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
