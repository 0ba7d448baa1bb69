// RUN: ftuner-opt %s --split-input-file --verify-diagnostics --ftuner-tile
// RUN: not ftuner-opt %s --split-input-file --ftuner-tile 2>&1 | FileCheck %s

// Each chunk fails on its own and reports at its line in this file (the same errors without
// --verify-diagnostics, second RUN line).
// CHECK: tile-verify-diagnostics.mlir:[[# @LINE + 4]]:8: error: ftuner.ukernels describes a f32 batch_matmul but the op is a f32 matmul
// CHECK: tile-verify-diagnostics.mlir:[[# @LINE + 13]]:8: error: cache block 66x64 must be a multiple of the register tile 4x16
func.func @family(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{ftuner.ukernels describes a f32 batch_matmul but the op is a f32 matmul}}
  %r = linalg.matmul {ftuner.ukernels = {cores = 2 : i64, dtype = "f32", family = "batch_matmul", kc = 32 : i64, lanes = 16 : i64,
                                         mc = 64 : i64, mr = 4 : i64, nc = 64 : i64, nr = 16 : i64}}
      ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

func.func @block(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{cache block 66x64 must be a multiple of the register tile 4x16}}
  %r = linalg.matmul {ftuner.ukernels = {cores = 2 : i64, dtype = "f32", family = "matmul", kc = 32 : i64, lanes = 16 : i64,
                                         mc = 66 : i64, mr = 4 : i64, nc = 64 : i64, nr = 16 : i64}}
      ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

// expected-error @+1 {{custom op 'func.fun' is unknown}}
func.fun @typo() {
  return
}

// -----

func.func @conv_set(%x: tensor<?x5x?x?xf32>, %w: tensor<7x5x3x3xf32>, %c: tensor<?x7x?x?xf32>) -> tensor<?x7x?x?xf32> {
  // expected-error @+1 {{ftuner.ukernels describes a f32 batch_matmul but the op is a f32 conv2d tiled as matmul}}
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>,
      ftuner.ukernels = {cores = 2 : i64, dtype = "f32", family = "batch_matmul", kc = 32 : i64, lanes = 16 : i64,
                         mc = 64 : i64, mr = 4 : i64, nc = 64 : i64, nr = 16 : i64}}
      ins(%x, %w : tensor<?x5x?x?xf32>, tensor<7x5x3x3xf32>) outs(%c : tensor<?x7x?x?xf32>) -> tensor<?x7x?x?xf32>
  return %r : tensor<?x7x?x?xf32>
}
