func.func @f(%a: tensor<4611686018427387904x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4611686018427387904x4xf32>) -> tensor<4611686018427387904x4xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4611686018427387904x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4611686018427387904x4xf32>) -> tensor<4611686018427387904x4xf32>
  return %r : tensor<4611686018427387904x4xf32>
}
