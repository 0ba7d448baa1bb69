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
