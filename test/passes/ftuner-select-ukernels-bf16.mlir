// RUN: ftuner-opt %s --target=intel-spr --ftuner-select-ukernels=matmul-precision=bf16 | FileCheck %s

// matmul_precision=bf16 on an AMX target: fp32 matmuls get bf16 operands (rounded to nearest even in
// integer ops) and the AMX set; an activation read by several matmuls (a layer norm's output feeding
// the query, key and value projections) is rounded once, each weight once.
func.func @qkv(%x: tensor<?x64xf32>, %wq: tensor<64x32xf32>, %wk: tensor<64x32xf32>, %wv: tensor<64x32xf32>)
    -> (tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x64xf32>
  %e = tensor.empty(%m) : tensor<?x32xf32>
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x32xf32>) -> tensor<?x32xf32>
  %q = linalg.matmul ins(%x, %wq : tensor<?x64xf32>, tensor<64x32xf32>) outs(%init : tensor<?x32xf32>) -> tensor<?x32xf32>
  %k = linalg.matmul ins(%x, %wk : tensor<?x64xf32>, tensor<64x32xf32>) outs(%init : tensor<?x32xf32>) -> tensor<?x32xf32>
  %v = linalg.matmul ins(%x, %wv : tensor<?x64xf32>, tensor<64x32xf32>) outs(%init : tensor<?x32xf32>) -> tensor<?x32xf32>
  return %q, %k, %v : tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>
}

// CHECK-LABEL: func.func @qkv(
// CHECK:         %[[X:.+]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<?x64xf32>) outs(%{{.*}} : tensor<?x64xbf16>)
// CHECK:           arith.shrui
// CHECK:           arith.trunci
// CHECK:         %[[WQ:.+]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<64x32xf32>) outs(%{{.*}} : tensor<64x32xbf16>)
// CHECK:         linalg.matmul {{.*}}ftuner.amx_ukernels = {{.*}} ins(%[[X]], %[[WQ]] : tensor<?x64xbf16>, tensor<64x32xbf16>)
// CHECK-NOT:     tensor<?x64xbf16>) {
// CHECK:         %[[WK:.+]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<64x32xf32>) outs(%{{.*}} : tensor<64x32xbf16>)
// CHECK:         linalg.matmul {{.*}}ftuner.amx_ukernels = {{.*}} ins(%[[X]], %[[WK]] : tensor<?x64xbf16>, tensor<64x32xbf16>)
// CHECK:         %[[WV:.+]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<64x32xf32>) outs(%{{.*}} : tensor<64x32xbf16>)
// CHECK:         linalg.matmul {{.*}}ftuner.amx_ukernels = {{.*}} ins(%[[X]], %[[WV]] : tensor<?x64xbf16>, tensor<64x32xbf16>)
// CHECK-NOT:     linalg.generic
// CHECK:         return

// Attention's context: a batch matmul's result reaches the output projection through views and the
// head transpose. It is rounded where it is made, right after the batch matmul, and the transpose
// moves bf16 (rounding commutes with moving data).
func.func @context(%p: tensor<8x?x?xf32>, %v: tensor<8x?x16xf32>, %w: tensor<32x32xf32>) -> tensor<?x32xf32> {
  %c1 = arith.constant 1 : index
  %t = tensor.dim %p, %c1 : tensor<8x?x?xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%t) : tensor<8x?x16xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<8x?x16xf32>) -> tensor<8x?x16xf32>
  %ctx = linalg.batch_matmul ins(%p, %v : tensor<8x?x?xf32>, tensor<8x?x16xf32>) outs(%i : tensor<8x?x16xf32>) -> tensor<8x?x16xf32>
  %heads = tensor.expand_shape %ctx [[0, 1], [2], [3]] output_shape [4, 2, %t, 16] : tensor<8x?x16xf32> into tensor<4x2x?x16xf32>
  %et = tensor.empty(%t) : tensor<4x?x2x16xf32>
  %moved = linalg.transpose ins(%heads : tensor<4x2x?x16xf32>) outs(%et : tensor<4x?x2x16xf32>) permutation = [0, 2, 1, 3]
  %rows = tensor.collapse_shape %moved [[0, 1], [2, 3]] : tensor<4x?x2x16xf32> into tensor<?x32xf32>
  %m = tensor.dim %rows, %c1 : tensor<?x32xf32>
  %eo = tensor.empty(%m) : tensor<?x32xf32>
  %io = linalg.fill ins(%zero : f32) outs(%eo : tensor<?x32xf32>) -> tensor<?x32xf32>
  %out = linalg.matmul ins(%rows, %w : tensor<?x32xf32>, tensor<32x32xf32>) outs(%io : tensor<?x32xf32>) -> tensor<?x32xf32>
  return %out : tensor<?x32xf32>
}

// CHECK-LABEL: func.func @context(
// CHECK:         %[[CTX:.+]] = linalg.batch_matmul {{.*}}ftuner.amx_ukernels
// CHECK:         %[[E:.+]] = tensor.empty({{.*}}) : tensor<8x?x16xbf16>
// CHECK-NEXT:    %[[R:.+]] = linalg.generic {{.*}} ins(%[[CTX]] : tensor<8x?x16xf32>) outs(%[[E]] : tensor<8x?x16xbf16>)
// CHECK:         %[[H:.+]] = tensor.expand_shape %[[R]] {{.*}} : tensor<8x?x16xbf16> into tensor<4x2x?x16xbf16>
// CHECK:         %[[T:.+]] = linalg.transpose ins(%[[H]] : tensor<4x2x?x16xbf16>) outs(%{{.*}} : tensor<4x?x2x16xbf16>) permutation = [0, 2, 1, 3]
// CHECK:         %[[ROWS:.+]] = tensor.collapse_shape %[[T]] {{.*}} : tensor<4x?x2x16xbf16> into tensor<?x32xbf16>
// CHECK:         linalg.matmul {{.*}}ftuner.amx_ukernels = {{.*}} ins(%[[ROWS]], %{{.*}} : tensor<?x32xbf16>, tensor<32x32xbf16>)

// A fused query/key/value projection (GPT-2's c_attn) split into column slices, each reaching a batch
// matmul through views and transposes: the projection's result is rounded once, whole, where it is
// made (so its dispatch's epilogue writes bf16), and each slice is taken of the bf16 copy.
func.func @fused_qkv(%x: tensor<?x16xf32>, %w: tensor<16x48xf32>) -> tensor<2x?x?xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %x, %c0 : tensor<?x16xf32>
  %e = tensor.empty(%m) : tensor<?x48xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x48xf32>) -> tensor<?x48xf32>
  %qkv = linalg.matmul ins(%x, %w : tensor<?x16xf32>, tensor<16x48xf32>) outs(%init : tensor<?x48xf32>) -> tensor<?x48xf32>
  %c2 = arith.constant 2 : index
  %t = arith.divui %m, %c2 : index
  %b = tensor.expand_shape %qkv [[0, 1], [2]] output_shape [2, %t, 48] : tensor<?x48xf32> into tensor<2x?x48xf32>
  %q = tensor.extract_slice %b[0, 0, 0] [2, %t, 16] [1, 1, 1] : tensor<2x?x48xf32> to tensor<2x?x16xf32>
  %k = tensor.extract_slice %b[0, 0, 16] [2, %t, 16] [1, 1, 1] : tensor<2x?x48xf32> to tensor<2x?x16xf32>
  %ek = tensor.empty(%t) : tensor<2x16x?xf32>
  %kt = linalg.transpose ins(%k : tensor<2x?x16xf32>) outs(%ek : tensor<2x16x?xf32>) permutation = [0, 2, 1]
  %es = tensor.empty(%t, %t) : tensor<2x?x?xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x?x?xf32>) -> tensor<2x?x?xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x?x16xf32>, tensor<2x16x?xf32>) outs(%fs : tensor<2x?x?xf32>) -> tensor<2x?x?xf32>
  return %s : tensor<2x?x?xf32>
}
// CHECK-LABEL: func.func @fused_qkv(
// CHECK:         %[[QKV:.+]] = linalg.matmul {{.*}}ftuner.amx_ukernels
// CHECK:         %[[R:.+]] = linalg.generic {{.*}} ins(%[[QKV]] : tensor<?x48xf32>) outs(%{{.*}} : tensor<?x48xbf16>)
// CHECK:         %[[B:.+]] = tensor.expand_shape %[[R]] {{.*}} into tensor<2x?x48xbf16>
// CHECK-DAG:     %[[Q:.+]] = tensor.extract_slice %[[B]][0, 0, 0] {{.*}} to tensor<2x?x16xbf16>
// CHECK-DAG:     %[[K:.+]] = tensor.extract_slice %[[B]][0, 0, 16] {{.*}} to tensor<2x?x16xbf16>
// CHECK:         %[[KT:.+]] = linalg.transpose ins(%[[K]] : tensor<2x?x16xbf16>)
// CHECK:         linalg.batch_matmul {{.*}}ftuner.amx_ukernels = {{.*}} ins(%[[Q]], %[[KT]] : tensor<2x?x16xbf16>, tensor<2x16x?xbf16>)
// CHECK-NOT:     outs(%{{.*}} : tensor<2x?x16xbf16>)
// CHECK:         return
