func.func @f(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %m = arith.constant dense<[[true, false, true], [false, false, true]]> : tensor<2x3xi1>
  %s = arith.constant dense<true> : tensor<2x3xi1>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%a, %m, %s : tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xi1>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%x: f32, %b: i1, %c: i1, %o: f32):
    %t = arith.andi %b, %c : i1
    %v = arith.select %t, %x, %z : f32
    linalg.yield %v : f32
  } -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
