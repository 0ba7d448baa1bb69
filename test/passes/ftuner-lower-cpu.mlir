// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-select-ukernels --ftuner-tile --ftuner-lower-cpu | FileCheck %s
// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-select-ukernels --ftuner-tile --ftuner-lower-cpu=num-threads=1 | FileCheck %s --check-prefix=SEQ
// RUN: ftuner-opt %s --target=x86-avx2 --ftuner-select-ukernels --ftuner-tile --ftuner-lower-cpu | FileCheck %s --check-prefix=AVX2

// The target reaches LLVM: a triple on the module, the CPU on every function, and on a target without
// AVX-512 the extension switched off (the in-process JIT's machine is the host's).
// CHECK:       module attributes {llvm.target_triple = "x86_64-unknown-linux-gnu"}
// AVX2:        module attributes {llvm.target_triple = "x86_64-unknown-linux-gnu"}
// AVX2-LABEL:  llvm.func @matmul_bias_relu(
// AVX2-SAME:     target_cpu = "x86-64-v3", target_features = #llvm.target_features<["-avx512f"]>

// A matmul followed by an elementwise generic (bias + ReLU): the matmul goes through the uKernels,
// the generic runs inside its dispatch as an epilogue on each block (lowering/dispatch/epilogues.py); both end
// up in the LLVM dialect.
#rows = affine_map<(i, j) -> (i, j)>
#bias = affine_map<(i, j) -> (j)>
func.func @matmul_bias_relu(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %bias: tensor<?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %out = tensor.empty(%m, %n) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#rows, #bias, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<?x?xf32>, tensor<?xf32>) outs(%out : tensor<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %v = arith.maximumf %s, %zero : f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// Destination-passing C interface: three inputs and the output, as memref descriptors. The public
// function calls the matmul's dispatch (with the bias + ReLU epilogue: its own copy, taking the bias),
// which stays a function of its own holding the OpenMP loop, the vectorized uKernels and the
// epilogue's vector code; nothing else is left in the public function.
// CHECK-NOT:   linalg.
// CHECK-NOT:   func.func
// CHECK-LABEL: llvm.func @matmul_bias_relu(
// CHECK-SAME:    target_cpu = "x86-64-v4"
// CHECK-NOT:     target_features
// CHECK-NOT:     omp.parallel
// CHECK:         llvm.call @[[$DISPATCH:ftuner_dispatch_matmul_8x32_[a-z0-9_]+_ep0]](
// CHECK-SAME:      {no_inline}
// CHECK-NOT:     omp.parallel
// CHECK-NOT:     llvm.intr.maximum
// CHECK-NOT:     llvm.call
// CHECK-LABEL: llvm.func @_mlir_ciface_matmul_bias_relu(
// CHECK-SAME:      %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr)
// CHECK-SAME:      llvm.emit_c_interface
// CHECK:       llvm.func @[[$DISPATCH]](
// CHECK-SAME:    ftuner.epilogue = 1 : i64
// CHECK:         omp.parallel
// CHECK:           omp.wsloop
// CHECK:         llvm.intr.fmuladd({{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK:         llvm.intr.maximum({{.*}}) : (vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK-NOT:   linalg.
// CHECK-NOT:   llvm.func @ftuner_rows
// CHECK-NOT:   llvm.func @ftuner_uk

// SEQ-LABEL: llvm.func @matmul_bias_relu(
// SEQ-NOT:     omp.
// SEQ-LABEL: llvm.func @ftuner_dispatch_matmul_8x32_
// SEQ-NOT:     omp.
// SEQ:         llvm.intr.fmuladd({{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// SEQ-NOT:     omp.
