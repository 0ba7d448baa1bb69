// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-select-ukernels --ftuner-tile --ftuner-lower-cpu --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s

// Elementwise consumers of a matmul run inside its dispatch, on each block after its last reduction
// block: the bias add and ReLU of a linear layer (2-D); a bias add and a residual add (one generic
// after elementwise fusion) read through the expand_shape that splits the rows into (batch, T), the
// residual collapsed as the rows were expanded; a result that is also returned stays as it is; an f64
// operand and a 0-d one keep their types; x^3 (math.fpowi by 3, GPT-2's GELU) is multiplications by
// then and fuses; a powi past the expansion's limit stays a call and its body is left apart.
#id2 = affine_map<(i, j) -> (i, j)>
#col2 = affine_map<(i, j) -> (j)>
func.func @linear_relu(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %bias: tensor<?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %out = tensor.empty(%m, %n) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#id2, #col2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<?x?xf32>, tensor<?xf32>) outs(%out : tensor<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %v = arith.maximumf %s, %zero : f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col3 = affine_map<(d0, d1, d2) -> (d2)>
func.func @linear_residual(%x: tensor<4x?x64xf32>, %w: tensor<64x48xf32>, %bias: tensor<48xf32>,
                           %res: tensor<4x?x48xf32>) -> tensor<4x?x48xf32> {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %t = tensor.dim %x, %c1 : tensor<4x?x64xf32>
  %rows = arith.muli %t, %c4 : index
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<4x?x64xf32> into tensor<?x64xf32>
  %e = tensor.empty(%rows) : tensor<?x48xf32>
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x48xf32>) -> tensor<?x48xf32>
  %mm = linalg.matmul ins(%flat, %w : tensor<?x64xf32>, tensor<64x48xf32>) outs(%init : tensor<?x48xf32>) -> tensor<?x48xf32>
  %mm3 = tensor.expand_shape %mm [[0, 1], [2]] output_shape [4, %t, 48] : tensor<?x48xf32> into tensor<4x?x48xf32>
  %e3 = tensor.empty(%t) : tensor<4x?x48xf32>
  %biased = linalg.generic {indexing_maps = [#id3, #col3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mm3, %bias : tensor<4x?x48xf32>, tensor<48xf32>) outs(%e3 : tensor<4x?x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<4x?x48xf32>
  %sum = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%biased, %res : tensor<4x?x48xf32>, tensor<4x?x48xf32>) outs(%e3 : tensor<4x?x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<4x?x48xf32>
  return %sum : tensor<4x?x48xf32>
}

func.func @two_readers(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %out = tensor.empty(%m, %n) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %mm : tensor<?x?xf32>, tensor<?x?xf32>) outs(%out : tensor<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.mulf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  return %mm, %r : tensor<?x?xf32>, tensor<?x?xf32>
}

// An operand of another element type (an f64 bias, narrowed in the body) keeps its type in the copy.
func.func @linear_f64_bias(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %bias: tensor<?xf64>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %out = tensor.empty(%m, %n) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#id2, #col2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<?x?xf32>, tensor<?xf64>) outs(%out : tensor<?x?xf32>) {
  ^bb0(%x: f32, %y: f64, %o: f32):
    %y32 = arith.truncf %y : f64 to f32
    %s = arith.addf %x, %y32 : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// A 0-d operand (a scale) is passed as it is.
func.func @scaled(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %s: tensor<f32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %out = tensor.empty(%m, %n) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#id2, affine_map<(i, j) -> ()>, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %s : tensor<?x?xf32>, tensor<f32>) outs(%out : tensor<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %v = arith.mulf %x, %y : f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// x^3 with math.fpowi (GPT-2's tanh GELU): no vector form of powi's integer exponent, not fused.
func.func @cubed(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %three = arith.constant 3 : i64
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %out = tensor.empty(%m, %n) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<?x?xf32>) outs(%out : tensor<?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %v = math.fpowi %x, %three : f32, i64
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func @power_17(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %seventeen = arith.constant 17 : i64
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %out = tensor.empty(%m, %n) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<?x?xf32>) outs(%out : tensor<?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %v = math.fpowi %x, %seventeen : f32, i64
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// A residual add read by two consumers (a layer norm's reductions): ftuner-recompute-cheap-producers
// leaves it alone (a clone per consumer would keep it from fusing), so it runs in the dispatch and
// both consumers read its one result.
#row3 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
func.func @residual_two_readers(%x: tensor<4x?x64xf32>, %w: tensor<64x48xf32>, %bias: tensor<48xf32>,
                                %res: tensor<4x?x48xf32>) -> (tensor<4x?x1xf32>, tensor<4x?x48xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %t = tensor.dim %x, %c1 : tensor<4x?x64xf32>
  %rows = arith.muli %t, %c4 : index
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<4x?x64xf32> into tensor<?x64xf32>
  %e = tensor.empty(%rows) : tensor<?x48xf32>
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x48xf32>) -> tensor<?x48xf32>
  %mm = linalg.matmul ins(%flat, %w : tensor<?x64xf32>, tensor<64x48xf32>) outs(%init : tensor<?x48xf32>) -> tensor<?x48xf32>
  %mm3 = tensor.expand_shape %mm [[0, 1], [2]] output_shape [4, %t, 48] : tensor<?x48xf32> into tensor<4x?x48xf32>
  %e3 = tensor.empty(%t) : tensor<4x?x48xf32>
  %biased = linalg.generic {indexing_maps = [#id3, #col3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mm3, %bias : tensor<4x?x48xf32>, tensor<48xf32>) outs(%e3 : tensor<4x?x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<4x?x48xf32>
  %sum = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%biased, %res : tensor<4x?x48xf32>, tensor<4x?x48xf32>) outs(%e3 : tensor<4x?x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<4x?x48xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %e1 = tensor.empty(%t) : tensor<4x?x1xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<4x?x1xf32>) -> tensor<4x?x1xf32>
  %mx = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%sum : tensor<4x?x48xf32>) outs(%f : tensor<4x?x1xf32>) {
  ^bb0(%p: f32, %o: f32):
    %v = arith.maximumf %p, %o : f32
    linalg.yield %v : f32
  } -> tensor<4x?x1xf32>
  %e4 = tensor.empty(%t) : tensor<4x?x48xf32>
  %sq = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sum : tensor<4x?x48xf32>) outs(%e4 : tensor<4x?x48xf32>) {
  ^bb0(%p: f32, %o: f32):
    %v = arith.mulf %p, %p : f32
    linalg.yield %v : f32
  } -> tensor<4x?x48xf32>
  return %mx, %sq : tensor<4x?x1xf32>, tensor<4x?x48xf32>
}

// Two linear layers with the same bias + ReLU: both sites call one copy, the one @linear_relu calls
// (lowering/llvm/merge_functions.py: a model's layers share their epilogue copies).
func.func @two_linear_relu(%a: tensor<?x?xf32>, %b1: tensor<?x?xf32>, %bias1: tensor<?xf32>,
                           %b2: tensor<?x?xf32>, %bias2: tensor<?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n1 = tensor.dim %b1, %c1 : tensor<?x?xf32>
  %e1 = tensor.empty(%m, %n1) : tensor<?x?xf32>
  %init1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<?x?xf32>) -> tensor<?x?xf32>
  %mm1 = linalg.matmul ins(%a, %b1 : tensor<?x?xf32>, tensor<?x?xf32>) outs(%init1 : tensor<?x?xf32>) -> tensor<?x?xf32>
  %out1 = tensor.empty(%m, %n1) : tensor<?x?xf32>
  %r1 = linalg.generic {indexing_maps = [#id2, #col2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm1, %bias1 : tensor<?x?xf32>, tensor<?xf32>) outs(%out1 : tensor<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %v = arith.maximumf %s, %zero : f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  %n2 = tensor.dim %b2, %c1 : tensor<?x?xf32>
  %e2 = tensor.empty(%m, %n2) : tensor<?x?xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x?xf32>) -> tensor<?x?xf32>
  %mm2 = linalg.matmul ins(%r1, %b2 : tensor<?x?xf32>, tensor<?x?xf32>) outs(%init2 : tensor<?x?xf32>) -> tensor<?x?xf32>
  %out2 = tensor.empty(%m, %n2) : tensor<?x?xf32>
  %r2 = linalg.generic {indexing_maps = [#id2, #col2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm2, %bias2 : tensor<?x?xf32>, tensor<?xf32>) outs(%out2 : tensor<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %v = arith.maximumf %s, %zero : f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  return %r2 : tensor<?x?xf32>
}

// CHECK-LABEL: IR Dump After ftuner-fuse-epilogues
// CHECK-LABEL: func.func @linear_relu(
// CHECK-NOT:     linalg.generic
// CHECK:         call @[[$RELU:ftuner_dispatch_matmul_8x32_[a-z0-9_]+_ep0]](%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         return
// CHECK-LABEL: func.func @linear_residual(
// CHECK-NOT:     linalg.generic
// CHECK:         %[[RES:.+]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<4x?x48xf32> into tensor<?x48xf32>
// CHECK:         %[[RES2:.+]] = tensor.cast %[[RES]] : tensor<?x48xf32> to tensor<?x?xf32>
// CHECK:         %[[OUT:.+]] = call @[[$BOTH:ftuner_dispatch_matmul_8x32_[a-z0-9_]+_ep1]](%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[RES2]])
// CHECK:         tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [4, %{{.*}}, 48]
// CHECK-NOT:     linalg.generic
// CHECK:         return
// CHECK-LABEL: func.func @two_readers(
// CHECK:         call @ftuner_dispatch_matmul_8x32_{{[a-z0-9_]+}}_f32(
// CHECK-NOT:     _ep
// CHECK:         linalg.generic
// CHECK:         arith.mulf
// CHECK:         return
// CHECK-LABEL: func.func @linear_f64_bias(
// CHECK:         call @ftuner_dispatch_matmul_8x32_{{[a-z0-9_]+}}_ep{{[0-9]+}}({{.*}}) : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xf64>) -> tensor<?x?xf32>
// CHECK-LABEL: func.func @scaled(
// CHECK-NOT:     linalg.generic
// CHECK:         call @ftuner_dispatch_matmul_8x32_{{[a-z0-9_]+}}_ep{{[0-9]+}}({{.*}}) : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         return
// CHECK-LABEL: func.func @cubed(
// CHECK-NOT:     linalg.generic
// CHECK:         call @[[$CUBED:ftuner_dispatch_matmul_8x32_[a-z0-9_]+_ep[0-9]+]](
// CHECK-NOT:     linalg.generic
// CHECK:         return
// CHECK-LABEL: func.func @power_17(
// CHECK:         call @ftuner_dispatch_matmul_8x32_{{[a-z0-9_]+}}_f32(
// CHECK-NOT:     _ep
// CHECK:         math.fpowi
// CHECK:         return
// CHECK-LABEL: func.func @residual_two_readers(
// CHECK-NOT:     linalg.generic
// CHECK:         %[[SUM:.+]] = call @ftuner_dispatch_matmul_8x32_{{[a-z0-9_]+}}_ep{{[0-9]+}}(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK-NOT:     arith.addf
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.maximumf
// CHECK-NOT:     arith.addf
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.mulf
// CHECK-NOT:     arith.addf
// CHECK:         return
// CHECK-LABEL: func.func @two_linear_relu(
// CHECK-NOT:     linalg.generic
// CHECK:         %[[R1:.+]] = call @[[$RELU]](%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK-NOT:     linalg.generic
// CHECK:         call @[[$RELU]](%[[R1]], %{{.*}}, %{{.*}}, %{{.*}})
// CHECK-NOT:     linalg.generic
// CHECK:         return
// CHECK:       func.func private @[[$RELU]](
// CHECK-SAME:    %{{.*}}: tensor<?xf32>) -> tensor<?x?xf32> attributes {ftuner.dispatch = "matmul", ftuner.epilogue = 1 : i64, ftuner.ukernel_set = {{.*}}}
// CHECK:         scf.forall
// CHECK:           tensor.extract_slice %arg3[%{{.*}}] [%{{.*}}] [1] : tensor<?xf32> to tensor<?xf32>
// CHECK:           scf.for
// The block's rows in vectors of 16: full vectors, then the masked rest
// CHECK:             vector.transfer_read {{.*}} : tensor<?xf32>, vector<16xf32>
// CHECK:             arith.maximumf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK:             vector.mask
// CHECK:           scf.forall.in_parallel
// CHECK:       func.func private @[[$BOTH]](
// CHECK-SAME:    %{{.*}}: tensor<?xf32>, %{{.*}}: tensor<?x?xf32>) -> tensor<?x?xf32> attributes {ftuner.dispatch = "matmul", ftuner.epilogue = 1 : i64, ftuner.ukernel_set = {{.*}}}
// CHECK:         scf.forall
// CHECK:           tensor.extract_slice %arg4[%{{.*}}, %{{.*}}] [1, %{{.*}}] [1, 1] : tensor<?x?xf32> to tensor<?xf32>
// CHECK:           arith.addf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK-NEXT:      arith.addf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK:           scf.forall.in_parallel
// CHECK:       func.func private @[[$CUBED]](
// CHECK:         scf.forall
// CHECK-NOT:       math.fpowi
// CHECK:           %[[SQ:.+]] = arith.mulf %[[X:.+]], %[[X]] : vector<16xf32>
// CHECK-NEXT:      arith.mulf %[[X]], %[[SQ]] : vector<16xf32>
// CHECK:           scf.forall.in_parallel
