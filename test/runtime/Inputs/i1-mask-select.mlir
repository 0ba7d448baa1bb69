func.func @mask(%a: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xi1>
  %z = arith.constant 0.0 : f32
  %m = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%a : tensor<?xf32>) outs(%e : tensor<?xi1>) {
  ^bb0(%x: f32, %o: i1):
    %p = arith.cmpf ogt, %x, %z : f32
    linalg.yield %p : i1
  } -> tensor<?xi1>
  %e2 = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%m, %a : tensor<?xi1>, tensor<?xf32>) outs(%e2 : tensor<?xf32>) {
  ^bb0(%p: i1, %x: f32, %o: f32):
    %y = arith.select %p, %x, %z : f32
    linalg.yield %y : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}
