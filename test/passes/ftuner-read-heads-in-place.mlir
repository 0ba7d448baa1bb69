// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-select-ukernels --ftuner-tile --ftuner-read-heads-in-place | FileCheck %s

// Attention's head transposes (Q, V: [0, 2, 1, 3]; K^T: [0, 2, 3, 1]) collapsed into batch-matmul
// operands are read in place, and the context written in place in [B, T, H, D] instead of transposed
// back: the dispatch copies take the 4-D tensors (lowering/dispatch/head_views.py).
func.func @main(%qkv: tensor<?x?x120xf32>, %rows: tensor<?xf32>) -> tensor<?x?x40xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %nheads = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %qkv, %c0 : tensor<?x?x120xf32>
  %t = tensor.dim %qkv, %c1 : tensor<?x?x120xf32>
  %r = tensor.dim %rows, %c0 : tensor<?xf32>
  %q2 = tensor.extract_slice %qkv[0, 0, 0] [%b, %t, 40] [1, 1, 1] : tensor<?x?x120xf32> to tensor<?x?x40xf32>
  %k2 = tensor.extract_slice %qkv[0, 0, 40] [%b, %t, 40] [1, 1, 1] : tensor<?x?x120xf32> to tensor<?x?x40xf32>
  %v2 = tensor.extract_slice %qkv[0, 0, 80] [%b, %t, 40] [1, 1, 1] : tensor<?x?x120xf32> to tensor<?x?x40xf32>
  %q = tensor.expand_shape %q2 [[0], [1], [2, 3]] output_shape [%b, %t, 2, 20] : tensor<?x?x40xf32> into tensor<?x?x2x20xf32>
  %k = tensor.expand_shape %k2 [[0], [1], [2, 3]] output_shape [%b, %t, 2, 20] : tensor<?x?x40xf32> into tensor<?x?x2x20xf32>
  %v = tensor.expand_shape %v2 [[0], [1], [2, 3]] output_shape [%b, %t, 2, 20] : tensor<?x?x40xf32> into tensor<?x?x2x20xf32>
  %e1 = tensor.empty(%b, %t) : tensor<?x2x?x20xf32>
  %qt = linalg.transpose ins(%q : tensor<?x?x2x20xf32>) outs(%e1 : tensor<?x2x?x20xf32>) permutation = [0, 2, 1, 3]
  %vt = linalg.transpose ins(%v : tensor<?x?x2x20xf32>) outs(%e1 : tensor<?x2x?x20xf32>) permutation = [0, 2, 1, 3]
  %e2 = tensor.empty(%b, %t) : tensor<?x2x20x?xf32>
  %kt = linalg.transpose ins(%k : tensor<?x?x2x20xf32>) outs(%e2 : tensor<?x2x20x?xf32>) permutation = [0, 2, 3, 1]
  
  %qc = tensor.collapse_shape %qt [[0, 1], [2], [3]] : tensor<?x2x?x20xf32> into tensor<?x?x20xf32>
  %kc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<?x2x20x?xf32> into tensor<?x20x?xf32>
  %vc = tensor.collapse_shape %vt [[0, 1], [2], [3]] : tensor<?x2x?x20xf32> into tensor<?x?x20xf32>
  %bh = arith.muli %b, %nheads : index
  %es = tensor.empty(%bh, %r, %t) : tensor<?x?x?xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %s = linalg.batch_matmul ins(%qc, %kc : tensor<?x?x20xf32>, tensor<?x20x?xf32>) outs(%fs : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %eo = tensor.empty(%bh, %r) : tensor<?x?x20xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<?x?x20xf32>) -> tensor<?x?x20xf32>
  %o = linalg.batch_matmul ins(%s, %vc : tensor<?x?x?xf32>, tensor<?x?x20xf32>) outs(%fo : tensor<?x?x20xf32>) -> tensor<?x?x20xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [%b, 2, %r, 20] : tensor<?x?x20xf32> into tensor<?x2x?x20xf32>
  %ec = tensor.empty(%b, %r) : tensor<?x?x2x20xf32>
  %ot = linalg.transpose ins(%o4 : tensor<?x2x?x20xf32>) outs(%ec : tensor<?x?x2x20xf32>) permutation = [0, 2, 1, 3]
  %ctx = tensor.collapse_shape %ot [[0], [1], [2, 3]] : tensor<?x?x2x20xf32> into tensor<?x?x40xf32>
  return %ctx : tensor<?x?x40xf32>
}

// K^T is also returned: its transpose stays, and B is read as the collapsed operand; Q still a view.
func.func @kept(%q: tensor<?x?x2x20xf32>, %k: tensor<?x?x2x20xf32>) -> (tensor<?x?x?xf32>, tensor<?x2x20x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %q, %c0 : tensor<?x?x2x20xf32>
  %t = tensor.dim %q, %c1 : tensor<?x?x2x20xf32>
  %e1 = tensor.empty(%b, %t) : tensor<?x2x?x20xf32>
  %qt = linalg.transpose ins(%q : tensor<?x?x2x20xf32>) outs(%e1 : tensor<?x2x?x20xf32>) permutation = [0, 2, 1, 3]
  %e2 = tensor.empty(%b, %t) : tensor<?x2x20x?xf32>
  %kt = linalg.transpose ins(%k : tensor<?x?x2x20xf32>) outs(%e2 : tensor<?x2x20x?xf32>) permutation = [0, 2, 3, 1]
  %qc = tensor.collapse_shape %qt [[0, 1], [2], [3]] : tensor<?x2x?x20xf32> into tensor<?x?x20xf32>
  %kc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<?x2x20x?xf32> into tensor<?x20x?xf32>
  %c2 = arith.constant 2 : index
  %bh = arith.muli %b, %c2 : index
  %es = tensor.empty(%bh, %t, %t) : tensor<?x?x?xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %s = linalg.batch_matmul ins(%qc, %kc : tensor<?x?x20xf32>, tensor<?x20x?xf32>) outs(%fs : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %s, %kt : tensor<?x?x?xf32>, tensor<?x2x20x?xf32>
}

// Q, K, V as views of a matmul's result: the head-view dispatch is still called out of line with unit
// innermost strides (dispatch_calls.py sees the views keep the result's innermost stride).
func.func @from_matmul(%x: tensor<?x16xf32>, %w: tensor<16x120xf32>, %rows: tensor<?xf32>) -> tensor<?x?x20xf32> {
  %cz = arith.constant 0 : index
  %zp = arith.constant 0.0 : f32
  %n = tensor.dim %x, %cz : tensor<?x16xf32>
  %ep = tensor.empty(%n) : tensor<?x120xf32>
  %fp = linalg.fill ins(%zp : f32) outs(%ep : tensor<?x120xf32>) -> tensor<?x120xf32>
  %p = linalg.matmul ins(%x, %w : tensor<?x16xf32>, tensor<16x120xf32>) outs(%fp : tensor<?x120xf32>) -> tensor<?x120xf32>
  %qkv = tensor.expand_shape %p [[0, 1], [2]] output_shape [1, %n, 120] : tensor<?x120xf32> into tensor<1x?x120xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %nheads = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %qkv, %c0 : tensor<1x?x120xf32>
  %t = tensor.dim %qkv, %c1 : tensor<1x?x120xf32>
  %r = tensor.dim %rows, %c0 : tensor<?xf32>
  %q2 = tensor.extract_slice %qkv[0, 0, 0] [%b, %t, 40] [1, 1, 1] : tensor<1x?x120xf32> to tensor<?x?x40xf32>
  %k2 = tensor.extract_slice %qkv[0, 0, 40] [%b, %t, 40] [1, 1, 1] : tensor<1x?x120xf32> to tensor<?x?x40xf32>
  %v2 = tensor.extract_slice %qkv[0, 0, 80] [%b, %t, 40] [1, 1, 1] : tensor<1x?x120xf32> to tensor<?x?x40xf32>
  %q = tensor.expand_shape %q2 [[0], [1], [2, 3]] output_shape [%b, %t, 2, 20] : tensor<?x?x40xf32> into tensor<?x?x2x20xf32>
  %k = tensor.expand_shape %k2 [[0], [1], [2, 3]] output_shape [%b, %t, 2, 20] : tensor<?x?x40xf32> into tensor<?x?x2x20xf32>
  %v = tensor.expand_shape %v2 [[0], [1], [2, 3]] output_shape [%b, %t, 2, 20] : tensor<?x?x40xf32> into tensor<?x?x2x20xf32>
  %e1 = tensor.empty(%b, %t) : tensor<?x2x?x20xf32>
  %qt = linalg.transpose ins(%q : tensor<?x?x2x20xf32>) outs(%e1 : tensor<?x2x?x20xf32>) permutation = [0, 2, 1, 3]
  %vt = linalg.transpose ins(%v : tensor<?x?x2x20xf32>) outs(%e1 : tensor<?x2x?x20xf32>) permutation = [0, 2, 1, 3]
  %e2 = tensor.empty(%b, %t) : tensor<?x2x20x?xf32>
  %kt = linalg.transpose ins(%k : tensor<?x?x2x20xf32>) outs(%e2 : tensor<?x2x20x?xf32>) permutation = [0, 2, 3, 1]
  
  %qc = tensor.collapse_shape %qt [[0, 1], [2], [3]] : tensor<?x2x?x20xf32> into tensor<?x?x20xf32>
  %kc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<?x2x20x?xf32> into tensor<?x20x?xf32>
  %vc = tensor.collapse_shape %vt [[0, 1], [2], [3]] : tensor<?x2x?x20xf32> into tensor<?x?x20xf32>
  %bh = arith.muli %b, %nheads : index
  %es = tensor.empty(%bh, %r, %t) : tensor<?x?x?xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %s = linalg.batch_matmul ins(%qc, %kc : tensor<?x?x20xf32>, tensor<?x20x?xf32>) outs(%fs : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %eo = tensor.empty(%bh, %r) : tensor<?x?x20xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<?x?x20xf32>) -> tensor<?x?x20xf32>
  %o = linalg.batch_matmul ins(%s, %vc : tensor<?x?x?xf32>, tensor<?x?x20xf32>) outs(%fo : tensor<?x?x20xf32>) -> tensor<?x?x20xf32>
  return %o : tensor<?x?x20xf32>
}

// With the batch dynamic, torch-mlir merges batch and heads by a tensor.reshape to a computed shape: the
// head-view call is versioned on that shape's last two sizes being the transposed tensor's (then it is
// the merge), the reshape kept in the other branch (here R need not be T).
func.func @computed_reshape(%qkv: tensor<?x?x120xf32>, %rows: tensor<?xf32>) -> tensor<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %qkv, %c0 : tensor<?x?x120xf32>
  %t = tensor.dim %qkv, %c1 : tensor<?x?x120xf32>
  %r = tensor.dim %rows, %c0 : tensor<?xf32>
  %q2 = tensor.extract_slice %qkv[0, 0, 0] [%b, %t, 40] [1, 1, 1] : tensor<?x?x120xf32> to tensor<?x?x40xf32>
  %k2 = tensor.extract_slice %qkv[0, 0, 40] [%b, %t, 40] [1, 1, 1] : tensor<?x?x120xf32> to tensor<?x?x40xf32>
  %q = tensor.expand_shape %q2 [[0], [1], [2, 3]] output_shape [%b, %t, 2, 20] : tensor<?x?x40xf32> into tensor<?x?x2x20xf32>
  %k = tensor.expand_shape %k2 [[0], [1], [2, 3]] output_shape [%b, %t, 2, 20] : tensor<?x?x40xf32> into tensor<?x?x2x20xf32>
  %e1 = tensor.empty(%b, %t) : tensor<?x2x?x20xf32>
  %qt = linalg.transpose ins(%q : tensor<?x?x2x20xf32>) outs(%e1 : tensor<?x2x?x20xf32>) permutation = [0, 2, 1, 3]
  %e2 = tensor.empty(%b, %t) : tensor<?x2x20x?xf32>
  %kt = linalg.transpose ins(%k : tensor<?x?x2x20xf32>) outs(%e2 : tensor<?x2x20x?xf32>) permutation = [0, 2, 3, 1]
  %nheads = arith.constant 2 : index
  %bh = arith.muli %b, %nheads : index
  %bht = arith.muli %bh, %t : index
  %n = arith.divui %bht, %r : index
  %n64 = arith.index_cast %n : index to i64
  %r64 = arith.index_cast %r : index to i64
  %d64 = arith.constant 20 : i64
  %qshape = tensor.from_elements %n64, %r64, %d64 : tensor<3xi64>
  %kshape = tensor.from_elements %n64, %d64, %r64 : tensor<3xi64>
  %qc = tensor.reshape %qt(%qshape) : (tensor<?x2x?x20xf32>, tensor<3xi64>) -> tensor<?x?x20xf32>
  %kc = tensor.reshape %kt(%kshape) : (tensor<?x2x20x?xf32>, tensor<3xi64>) -> tensor<?x20x?xf32>
  %es = tensor.empty(%n, %r, %r) : tensor<?x?x?xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %s = linalg.batch_matmul ins(%qc, %kc : tensor<?x?x20xf32>, tensor<?x20x?xf32>) outs(%fs : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %s : tensor<?x?x?xf32>
}

// The head-view dispatch slices (batch, head) matrices out of the 4-D operands: batch index / H, % H.

// CHECK-LABEL: func.func @main(
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[Q:.+]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] {{.*}} into tensor<?x?x2x20xf32>
// CHECK:         %[[K:.+]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] {{.*}} into tensor<?x?x2x20xf32>
// CHECK:         %[[V:.+]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] {{.*}} into tensor<?x?x2x20xf32>
// CHECK:         %[[QD:.+]] = tensor.cast %[[Q]] : tensor<?x?x2x20xf32> to tensor<?x?x?x?xf32>
// CHECK:         %[[KD:.+]] = tensor.cast %[[K]] : tensor<?x?x2x20xf32> to tensor<?x?x?x?xf32>
// CHECK:         %[[S:.+]] = call @ftuner_dispatch_batch_matmul_{{.*}}_av0213_bv0231_z_f32(%[[QD]], %[[KD]], %{{.*}}) : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?xf32>)
// CHECK:         %[[VD:.+]] = tensor.cast %[[V]] : tensor<?x?x2x20xf32> to tensor<?x?x?x?xf32>
// CHECK:         %[[E:.+]] = tensor.empty(%{{.+}}, %{{.+}}) : tensor<?x?x2x20xf32>
// CHECK:         %[[ED:.+]] = tensor.cast %[[E]] : tensor<?x?x2x20xf32> to tensor<?x?x?x?xf32>
// CHECK:         %[[O:.+]] = call @ftuner_dispatch_batch_matmul_{{.*}}_bv0213_cv0213_z_f32(%[[S]], %[[VD]], %[[ED]]) : (tensor<?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
// CHECK:         %[[OC:.+]] = tensor.cast %[[O]] : tensor<?x?x?x?xf32> to tensor<?x?x2x20xf32>
// CHECK:         tensor.collapse_shape %[[OC]] {{\[}}[0], [1], [2, 3]]
// CHECK-NOT:     linalg.transpose
// CHECK-LABEL: func.func @kept(
// CHECK:         %[[KT:.+]] = linalg.transpose ins(%{{.*}} : tensor<?x?x2x20xf32>) {{.*}} permutation = [0, 2, 3, 1]
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[KC:.+]] = tensor.collapse_shape %[[KT]]
// CHECK:         call @ftuner_dispatch_batch_matmul_{{.*}}_av0213_z_f32(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?x?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>)
// CHECK:         return %{{.+}}, %[[KT]] :
// CHECK-LABEL: func.func @computed_reshape(
// CHECK:         %[[QSHAPE:.+]] = tensor.from_elements %{{.+}}, %{{.+}}, %{{.+}} : tensor<3xi64>
// CHECK:         %[[KSHAPE:.+]] = tensor.from_elements %{{.+}}, %{{.+}}, %{{.+}} : tensor<3xi64>
// CHECK:         %[[R1:.+]] = tensor.extract %[[QSHAPE]][%{{.+}}] : tensor<3xi64>
// CHECK:         arith.cmpi eq, %[[R1]], %{{.+}} : i64
// CHECK:         %[[K1:.+]] = tensor.extract %[[KSHAPE]][%{{.+}}] : tensor<3xi64>
// CHECK:         arith.cmpi eq, %[[K1]], %{{.+}} : i64
// CHECK:         scf.if %{{.+}} -> (tensor<?x?x?xf32>) {
// CHECK:           func.call @ftuner_dispatch_batch_matmul_{{.*}}_av0213_bv0231_z_f32(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?xf32>)
// CHECK:         } else {
// CHECK:           linalg.transpose
// CHECK:           tensor.reshape %{{.+}}(%[[QSHAPE]])
// CHECK:           func.call @ftuner_dispatch_batch_matmul_{{.*}}_p2_z_f32(
// The head-view dispatch slices (batch, head) matrices out of the 4-D operands: batch index / H, % H.
// CHECK-LABEL: func.func private @ftuner_dispatch_batch_matmul_{{.*}}_av0213_bv0231_z_f32(
// CHECK-SAME:      %[[A:[^:]+]]: tensor<?x?x?x?xf32>, %[[B:[^:]+]]: tensor<?x?x?x?xf32>, %{{[^:]+}}: tensor<?x?x?xf32>)
// CHECK-SAME:      ftuner.dispatch = "batch_matmul"
// CHECK:         scf.forall (%[[BH:[^,]+]], %{{[^,]+}}, %{{[^)]+}}) =
// CHECK:           %[[H:.+]] = tensor.dim %[[A]], %{{.+}} : tensor<?x?x?x?xf32>
// CHECK:           %[[BATCH:.+]] = arith.divui %[[BH]], %[[H]]
// CHECK:           %[[HEAD:.+]] = arith.remui %[[BH]], %[[H]]
// CHECK:           tensor.extract_slice %[[A]][%[[BATCH]], %{{.+}}, %[[HEAD]], %{{.+}}] [1, %{{.+}}, 1, %{{.+}}] [1, 1, 1, 1] : tensor<?x?x?x?xf32> to tensor<?x?xf32>
// CHECK:           tensor.extract_slice %[[B]][%[[BATCH]], %{{.+}}, %[[HEAD]], %{{.+}}] [1, %{{.+}}, 1, %{{.+}}] [1, 1, 1, 1] : tensor<?x?x?x?xf32> to tensor<?x?xf32>
// CHECK:           call @ftuner_pack_bt_
