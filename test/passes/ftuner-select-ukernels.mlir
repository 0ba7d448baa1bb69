// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-select-ukernels | FileCheck %s --check-prefix=AVX512
// RUN: ftuner-opt %s --target=x86-avx2 --ftuner-select-ukernels | FileCheck %s --check-prefix=AVX2

// AVX-512, f32: 16 lanes, 2 FMA + 2 load ports: 8x32 is FMA-bound (16 FMAs = 8 cycles, 2 B vectors + 8
// broadcasts = 5 cycles) with the best intensity among those (16x16 is load-bound and needs 22 GPRs for
// its A rows); kc from L1 32 KiB: 32K / 2 / (40 * 4 B) -> 64; blocks from L2 1 MiB: 1M / 4 / (64 * 4 B).
// AVX2, f32: 8 lanes, 16 registers: 6x16 (15 registers, FMA-bound, intensity 8.7; 4x16 6.4; 8x8 is load-bound); L2 512 KiB.
// AVX512-LABEL: func.func @matmul(
// AVX512:         linalg.matmul
// AVX512-SAME:      ftuner.ukernels = {chains = 8 : i64, cores = 2 : i64, dtype = "f32", family = "matmul", kc = 128 : i64, lanes = 16 : i64, mc = 512 : i64, mr = 8 : i64, nc = 512 : i64, nr = 32 : i64}
// AVX2-LABEL:  func.func @matmul(
// AVX2:           linalg.matmul
// AVX2-SAME:        ftuner.ukernels = {chains = 8 : i64, cores = 2 : i64, dtype = "f32", family = "matmul", kc = 128 : i64, lanes = 8 : i64, mc = 252 : i64, mr = 6 : i64, nc = 256 : i64, nr = 16 : i64}
func.func @matmul(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// AVX512-LABEL: func.func @dense(
// AVX512:         linalg.matmul
// AVX512-SAME:      family = "matmul_transpose_b"
func.func @dense(%x: tensor<?x768xf32>, %w: tensor<2304x768xf32>, %c: tensor<?x2304xf32>) -> tensor<?x2304xf32> {
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<?x768xf32>, tensor<2304x768xf32>) outs(%c : tensor<?x2304xf32>) -> tensor<?x2304xf32>
  return %r : tensor<?x2304xf32>
}

// AVX512-LABEL: func.func @batch(
// AVX512:         linalg.batch_matmul
// AVX512-SAME:      family = "batch_matmul"
func.func @batch(%a: tensor<?x?x64xf32>, %b: tensor<?x64x?xf32>, %c: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<?x?x64xf32>, tensor<?x64x?xf32>) outs(%c : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %r : tensor<?x?x?xf32>
}

// f64 has 8 lanes: 8x16 is FMA-bound (16 FMAs, 10 loads) with intensity 10.7 (4x32: 7.1); kc: 32K / 2 / (24 * 8 B) -> 64.
// AVX512-LABEL: func.func @matmul_f64(
// AVX512:         linalg.matmul
// AVX512-SAME:      dtype = "f64", family = "matmul", kc = 64 : i64, lanes = 8 : i64, mc = 512 : i64, mr = 8 : i64, nc = 512 : i64, nr = 16 : i64
func.func @matmul_f64(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>, %c: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf64>, tensor<?x?xf64>) outs(%c : tensor<?x?xf64>) -> tensor<?x?xf64>
  return %r : tensor<?x?xf64>
}

// Not handled, left unannotated: A transposed, f16, memrefs, elementwise generics.
// AVX512-LABEL: func.func @unsupported(
// AVX512-NOT:     ftuner.ukernels
// AVX512:         return
func.func @unsupported(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>,
                       %h: tensor<?x?xf16>, %hc: tensor<?x?xf16>,
                       %ma: memref<?x?xf32>, %mb: memref<?x?xf32>, %mc: memref<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf16>) {
  %t = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  %f = linalg.matmul ins(%h, %h : tensor<?x?xf16>, tensor<?x?xf16>) outs(%hc : tensor<?x?xf16>) -> tensor<?x?xf16>
  linalg.matmul ins(%ma, %mb : memref<?x?xf32>, memref<?x?xf32>) outs(%mc : memref<?x?xf32>)
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]} ins(%t : tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.negf %x : f32
    linalg.yield %y : f32
  } -> tensor<?x?xf32>
  return %g, %f : tensor<?x?xf32>, tensor<?x?xf16>
}

// A conv2d with a static filter gets the set of the GEMM it is tiled as (the plain matmul family); one
// whose filter size is only known at run time stays a loop nest.
// AVX512-LABEL: func.func @conv(
// AVX512:         linalg.conv_2d_nchw_fchw
// AVX512-SAME:      ftuner.ukernels = {chains = 8 : i64, cores = 2 : i64, dtype = "f32", family = "matmul", kc = 128 : i64, lanes = 16 : i64, mc = 512 : i64, mr = 8 : i64, nc = 512 : i64, nr = 32 : i64}
// AVX512:         linalg.conv_2d_nchw_fchw
// AVX512-NOT:       ftuner.ukernels
// AVX512-SAME:      -> tensor<?x?x?x?xf32>
func.func @conv(%x: tensor<?x5x?x?xf32>, %w: tensor<7x5x3x3xf32>, %c: tensor<?x7x?x?xf32>,
                %wd: tensor<?x?x?x?xf32>, %cd: tensor<?x?x?x?xf32>) -> (tensor<?x7x?x?xf32>, tensor<?x?x?x?xf32>) {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : tensor<?x5x?x?xf32>, tensor<7x5x3x3xf32>) outs(%c : tensor<?x7x?x?xf32>) -> tensor<?x7x?x?xf32>
  %xd = tensor.cast %x : tensor<?x5x?x?xf32> to tensor<?x?x?x?xf32>
  %s = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%xd, %wd : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) outs(%cd : tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return %r, %s : tensor<?x7x?x?xf32>, tensor<?x?x?x?xf32>
}

// torch's Conv1d is the conv2d of a height-1 image (views only), served by the GEMM uKernels; its
// strides and dilations move to the width.
// AVX512-LABEL: func.func @conv1d(
// AVX512:         %[[X:.*]] = tensor.expand_shape %arg0 {{\[}}[0], [1], [2, 3]] output_shape [%{{.*}}, 3, 1, %{{.*}}] : tensor<?x3x?xf32> into tensor<?x3x1x?xf32>
// AVX512:         %[[W:.*]] = tensor.expand_shape %arg1 {{\[}}[0], [1], [2, 3]] output_shape [8, 3, 1, 5] : tensor<8x3x5xf32> into tensor<8x3x1x5xf32>
// AVX512:         %[[ACC:.*]] = tensor.expand_shape %arg2 {{\[}}[0], [1], [2, 3]]
// AVX512:         %[[R:.*]] = linalg.conv_2d_nchw_fchw {dilations = dense<[1, 3]> : tensor<2xi64>, ftuner.ukernels = {{.*}}family = "matmul"{{.*}}, strides = dense<[1, 2]> : tensor<2xi64>} ins(%[[X]], %[[W]] : {{.*}}) outs(%[[ACC]] :
// AVX512:         tensor.collapse_shape %[[R]] {{\[}}[0], [1], [2, 3]] : tensor<?x8x1x?xf32> into tensor<?x8x?xf32>
// AVX512-NOT:     linalg.conv_1d
func.func @conv1d(%x: tensor<?x3x?xf32>, %w: tensor<8x3x5xf32>, %acc: tensor<?x8x?xf32>) -> tensor<?x8x?xf32> {
  %r = linalg.conv_1d_ncw_fcw {dilations = dense<3> : tensor<1xi64>, strides = dense<2> : tensor<1xi64>}
      ins(%x, %w : tensor<?x3x?xf32>, tensor<8x3x5xf32>) outs(%acc : tensor<?x8x?xf32>) -> tensor<?x8x?xf32>
  return %r : tensor<?x8x?xf32>
}

// A grouped conv (torch's Conv with groups: wav2vec2's positional convolution) becomes one conv2d per
// group on unit slices viewed without the group dim, each with the GEMM uKernels, inserted back into
// the result in order. A depthwise conv (one input channel a group) stays one op.
// AVX512-LABEL: func.func @grouped(
// AVX512:         %[[X0:.*]] = tensor.extract_slice %arg0[0, 0, 0, 0, 0] [%{{.*}}, 1, 4, %{{.*}}, 1] [1, 1, 1, 1, 1] : tensor<?x3x4x?x1xf32> to tensor<?x1x4x?x1xf32>
// AVX512:         tensor.collapse_shape %[[X0]] {{\[}}[0, 1], [2], [3], [4]] : tensor<?x1x4x?x1xf32> into tensor<?x4x?x1xf32>
// AVX512:         tensor.extract_slice %arg1[0, 0, 0, 0, 0] [1, 6, 4, 5, 1] [1, 1, 1, 1, 1] : tensor<3x6x4x5x1xf32> to tensor<1x6x4x5x1xf32>
// AVX512:         %[[C0:.*]] = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, ftuner.ukernels = {{.*}}, strides = dense<[2, 1]> : tensor<2xi64>}
// AVX512:         %[[E0:.*]] = tensor.expand_shape %[[C0]] {{\[}}[0, 1], [2], [3], [4]]
// AVX512:         %[[R0:.*]] = tensor.insert_slice %[[E0]] into %arg2[0, 0, 0, 0, 0]
// AVX512-COUNT-2: linalg.conv_2d_nchw_fchw
// AVX512:         %[[R2:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 2, 0, 0, 0]
// AVX512:         %[[D:.*]] = linalg.conv_2d_ngchw_gfchw {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x8x1x?x1xf32>, tensor<8x1x1x3x1xf32>)
// AVX512:         return %[[R2]], %[[D]] :
func.func @grouped(%x: tensor<?x3x4x?x1xf32>, %w: tensor<3x6x4x5x1xf32>, %acc: tensor<?x3x6x?x1xf32>,
                   %dx: tensor<?x8x1x?x1xf32>, %dw: tensor<8x1x1x3x1xf32>, %dacc: tensor<?x8x1x?x1xf32>)
    -> (tensor<?x3x6x?x1xf32>, tensor<?x8x1x?x1xf32>) {
  %r = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<[2, 1]> : vector<2xi64>}
      ins(%x, %w : tensor<?x3x4x?x1xf32>, tensor<3x6x4x5x1xf32>) outs(%acc : tensor<?x3x6x?x1xf32>) -> tensor<?x3x6x?x1xf32>
  %d = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%dx, %dw : tensor<?x8x1x?x1xf32>, tensor<8x1x1x3x1xf32>) outs(%dacc : tensor<?x8x1x?x1xf32>) -> tensor<?x8x1x?x1xf32>
  return %r, %d : tensor<?x3x6x?x1xf32>, tensor<?x8x1x?x1xf32>
}

// A depthwise conv becomes one parallel generic: the accumulator plus, per tap of the window, a view of
// the input shifted by the tap (times the dilation) times the tap's weight per channel; the accumulator
// is an input and the result a fresh tensor (a generic that reads its output is not vectorized).
// AVX512-LABEL: func.func @depthwise(
// AVX512:         tensor.extract_slice %arg0[0, 0, 0, 0] [%{{.*}}, 4, %{{.*}}, %{{.*}}] [1, 1, 1, 1]
// AVX512:         tensor.extract_slice %arg1[0, 0, 0] [4, 1, 1] [1, 1, 1] : tensor<4x2x3xf32> to tensor<4x1x1xf32>
// AVX512:         tensor.extract_slice %arg0[0, 0, 0, 2] [%{{.*}}, 4, %{{.*}}, %{{.*}}] [1, 1, 1, 1]
// AVX512:         tensor.extract_slice %arg0[0, 0, 2, 4] [%{{.*}}, 4, %{{.*}}, %{{.*}}] [1, 1, 1, 1]
// AVX512:         tensor.extract_slice %arg1[0, 1, 2] [4, 1, 1] [1, 1, 1] : tensor<4x2x3xf32> to tensor<4x1x1xf32>
// AVX512:         %[[E:.+]] = tensor.empty
// AVX512:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins({{.*}}, %arg2 : {{.*}}) outs(%[[E]] :
// AVX512-COUNT-6:   arith.mulf
// AVX512-NOT:     linalg.depthwise_conv_2d_nchw_chw
func.func @depthwise(%x: tensor<?x4x?x?xf32>, %w: tensor<4x2x3xf32>, %acc: tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32> {
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : tensor<?x4x?x?xf32>, tensor<4x2x3xf32>) outs(%acc : tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  return %r : tensor<?x4x?x?xf32>
}

// bf16 operands where no bf16 engine serves them (x86-avx512's engine is none: vdpbf16ps would be half
// the FMAs' flops) run on the fp32 uKernels, widened. A constant (a frozen weight) is widened here, once,
// into an fp32 constant, so ftuner-tile packs it at compile time (a widening generic is folded only after
// the tile pass, which then packed the weight on every call: 3x slower at M = 1); arguments are widened
// on every call. An inline dense bf16 constant (numpy cannot read it from the bindings) stays a generic.
// AVX512-LABEL: func.func @bf16_widened(
// AVX512:         %[[X:.*]] = linalg.generic
// AVX512:           arith.extf %{{.*}} : bf16 to f32
// AVX512:         %[[W:.*]] = arith.constant dense_resource<f32_weight> : tensor<3x2xf32>
// AVX512:         linalg.matmul
// AVX512-SAME:      dtype = "f32", family = "matmul_transpose_b"
// AVX512-SAME:      ins(%[[X]], %[[W]] : tensor<?x2xf32>, tensor<3x2xf32>)
// AVX512:         %[[Y:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<2x3xbf16>)
// AVX512:         linalg.matmul
// AVX512-SAME:      ins(%{{.*}}, %[[Y]] : tensor<?x2xf32>, tensor<2x3xf32>)
// AVX512:         %[[V:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x2xbf16>)
// AVX512:         linalg.matmul
// AVX512-SAME:      ins(%{{.*}}, %[[V]] : tensor<?x2xf32>, tensor<2x2xf32>)
// AVX512:       f32_weight: "0x{{........}}0000803F0000004000004040000000BF0000803E00000041"
func.func @bf16_widened(%x: tensor<?x2xbf16>, %y: tensor<2x3xbf16>, %c: tensor<?x3xf32>, %c2: tensor<?x2xf32>)
    -> (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x2xf32>) {
  %w = arith.constant dense_resource<bf16_w> : tensor<3x2xbf16>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<?x2xbf16>, tensor<3x2xbf16>) outs(%c : tensor<?x3xf32>) -> tensor<?x3xf32>
  %s = linalg.matmul ins(%x, %y : tensor<?x2xbf16>, tensor<2x3xbf16>) outs(%c : tensor<?x3xf32>) -> tensor<?x3xf32>
  %v = arith.constant dense<[[1.0, 2.0], [3.0, -0.5]]> : tensor<2x2xbf16>
  %t = linalg.matmul ins(%x, %v : tensor<?x2xbf16>, tensor<2x2xbf16>) outs(%c2 : tensor<?x2xf32>) -> tensor<?x2xf32>
  return %r, %s, %t : tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      bf16_w: "0x02000000803F0040404000BF803E0041"
    }
  }
#-}
