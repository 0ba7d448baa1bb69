// RUN: ftuner-opt %s --target=cuda:h200 --ftuner-gpu-pipeline --verify-diagnostics

// The output is written into an input tensor, which bufferization must copy into a new host buffer:
// refused with a location, not miscompiled into host memory the kernels cannot reach.
func.func @f(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{the GPU path does not support intermediate buffers yet}}
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
