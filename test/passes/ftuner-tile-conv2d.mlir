// RUN: ftuner-opt %s --split-input-file --ftuner-tile --canonicalize | FileCheck %s
// RUN: ftuner-opt %s --split-input-file --ftuner-tile --canonicalize | FileCheck %s --check-prefix=MAPS

// NCHW conv, two GEMM forms chosen at run time by the output image's pixel count (< 256: small images).
// Small: all images' patches as rows [OH*N*OW, C*KH*KW] (by output row, then image: the gather runs a
// task per (output row, image), batch 1 too) times the filter [F, C*KH*KW]^T into zeros (the zero-init
// dispatch), then one pass, a task per filter, adds the product, transposed to NCHW, onto the init.
// Large: one image at a time, an im2col generic gathers [C, KH, KW, OH, OW] from the image and the GEMM
// accumulates into the output's image viewed as [F, OH*OW]. The conv itself is gone.
// The small-image gather's loops are (oh, n, ow, c, kh, kw) at stride 2, the add's (f, n, oh, ow).
// MAPS:        affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d3, d0 * 2 + d4, d2 * 2 + d5)>
// MAPS-NEXT:   affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>
// MAPS-NEXT:   affine_map<(d0, d1, d2, d3) -> (d2, d1, d3, d0)>
// MAPS-NEXT:   affine_map<(d0, d1, d2, d3) -> (d1, d0, d2, d3)>
// CHECK-LABEL: func.func @nchw(
// CHECK-SAME:      %[[X:.*]]: tensor<?x5x?x?xf32>, %[[W:.*]]: tensor<7x5x3x3xf32>, %[[INIT:.*]]: tensor<?x7x?x?xf32>
// CHECK-NOT:     linalg.conv_2d
// CHECK:         %[[PIX:.*]] = arith.muli
// CHECK:         %[[FEW:.*]] = arith.cmpi ult, %[[PIX]], %c256
// CHECK:         scf.if %[[FEW]] -> (tensor<?x7x?x?xf32>) {
// CHECK:           linalg.generic
// CHECK-SAME:        ins(%[[X]] : tensor<?x5x?x?xf32>) outs(%{{.*}} : tensor<?x?x?x5x3x3xf32>) attrs = {ftuner.parallel_outer = 2 : i64}
// CHECK:           tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2], [3, 4, 5]] : tensor<?x?x?x5x3x3xf32> into tensor<?x45xf32>
// CHECK:           call @ftuner_dispatch_matmul_transpose_b_4x16_mc64_nc64_kc32_p2_z_f32(
// CHECK:           tensor.expand_shape %{{.*}} {{\[}}[0, 1, 2], [3]]
// CHECK:           linalg.generic
// CHECK-SAME:        outs(%[[INIT]] : tensor<?x7x?x?xf32>) attrs = {ftuner.parallel_outer = 1 : i64}
// CHECK:             arith.addf
// CHECK:         } else {
// CHECK-DAG:       %[[OUT:.*]] = tensor.collapse_shape %[[INIT]] {{\[}}[0], [1], [2, 3]] : tensor<?x7x?x?xf32> into tensor<?x7x?xf32>
// CHECK-DAG:       %[[A:.*]] = tensor.collapse_shape %[[W]] {{\[}}[0], [1, 2, 3]] : tensor<7x5x3x3xf32> into tensor<7x45xf32>
// CHECK:           %[[LOOP:.*]] = scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[OUT]])
// CHECK:             %[[IMG:.*]] = tensor.extract_slice %[[X]][%[[N]], 0, 0, 0] [1, 5, %{{.*}}, %{{.*}}] [1, 1, 1, 1] : tensor<?x5x?x?xf32> to tensor<5x?x?xf32>
// CHECK:             %[[P:.*]] = linalg.generic
// CHECK-SAME:          ins(%[[IMG]] : tensor<5x?x?xf32>) outs(%{{.*}} : tensor<5x3x3x?x?xf32>)
// CHECK:             %[[B:.*]] = tensor.collapse_shape %[[P]] {{\[}}[0, 1, 2], [3, 4]] : tensor<5x3x3x?x?xf32> into tensor<45x?xf32>
// CHECK:             %[[C:.*]] = tensor.extract_slice %[[ACC]][%[[N]], 0, 0] [1, 7, %{{.*}}] [1, 1, 1] : tensor<?x7x?xf32> to tensor<7x?xf32>
// CHECK:             call @ftuner_dispatch_matmul_4x16_mc64_nc64_kc32_p2_f32(
// CHECK:             tensor.insert_slice %{{.*}} into %[[ACC]][%[[N]], 0, 0] [1, 7, %{{.*}}] [1, 1, 1]
// CHECK:           tensor.expand_shape %[[LOOP]] {{\[}}[0], [1], [2, 3]] output_shape [%{{.*}}, 7, %{{.*}}, %{{.*}}]
// CHECK-NOT:     linalg.conv_2d
func.func @nchw(%x: tensor<?x5x?x?xf32>, %w: tensor<7x5x3x3xf32>, %init: tensor<?x7x?x?xf32>) -> tensor<?x7x?x?xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>,
      ftuner.ukernels = {cores = 2 : i64, dtype = "f32", family = "matmul", kc = 32 : i64, lanes = 16 : i64,
                         mc = 64 : i64, mr = 4 : i64, nc = 64 : i64, nr = 16 : i64}}
      ins(%x, %w : tensor<?x5x?x?xf32>, tensor<7x5x3x3xf32>) outs(%init : tensor<?x7x?x?xf32>) -> tensor<?x7x?x?xf32>
  return %r : tensor<?x7x?x?xf32>
}

// -----

// NHWC conv: all images at once, rows are output pixels: patches [N*OH*OW, KH*KW*C] x filter
// [KH*KW*C, F] accumulate into the output viewed as [N*OH*OW, F], expanded back.
// CHECK-LABEL: func.func @nhwc(
// CHECK-NOT:     linalg.conv_2d
// CHECK:         linalg.generic
// CHECK-SAME:        outs(%{{.*}} : tensor<?x?x?x3x3x5xf32>)
// CHECK:         tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2], [3, 4, 5]] : tensor<?x?x?x3x3x5xf32> into tensor<?x45xf32>
// CHECK:         tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2], [3]] : tensor<3x3x5x7xf32> into tensor<45x7xf32>
// CHECK:         call @ftuner_dispatch_matmul_4x16_mc64_nc64_kc32_p2_f32(
// CHECK:         tensor.expand_shape %{{.*}} {{\[}}[0, 1, 2], [3]] output_shape [%{{.*}}, %{{.*}}, %{{.*}}, 7]
// CHECK-NOT:     linalg.conv_2d
func.func @nhwc(%x: tensor<?x?x?x5xf32>, %w: tensor<3x3x5x7xf32>, %init: tensor<?x?x?x7xf32>) -> tensor<?x?x?x7xf32> {
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>,
      ftuner.ukernels = {cores = 2 : i64, dtype = "f32", family = "matmul", kc = 32 : i64, lanes = 16 : i64,
                         mc = 64 : i64, mr = 4 : i64, nc = 64 : i64, nr = 16 : i64}}
      ins(%x, %w : tensor<?x?x?x5xf32>, tensor<3x3x5x7xf32>) outs(%init : tensor<?x?x?x7xf32>) -> tensor<?x?x?x7xf32>
  return %r : tensor<?x?x?x7xf32>
}
