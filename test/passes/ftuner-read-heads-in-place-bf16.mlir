// RUN: ftuner-opt %s --target=intel-spr --ftuner-select-ukernels --ftuner-tile --ftuner-read-heads-in-place | FileCheck %s
// RUN: ftuner-opt %s --target=intel-spr --ftuner-cpu-pipeline --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=BODY

// bf16 attention on AMX: Q and K^T ([0, 2, 1, 3], [0, 2, 3, 1]) and V are read in place by AMX batch
// dispatches on 4-D head views, specialized on the head count (here 2). On tensors the placeholder is one
// generic over (batch, head, m, n, k); on buffers a task takes heads of one batch entry as a strided
// 3-D view (subview, then the head dim moved first), K^T packed through the transposing VNNI pack.
func.func @scores(%qkv: tensor<?x?x120xbf16>) -> tensor<?x?x?xf32> {
  %nheads = arith.constant 2 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %qkv, %c0 : tensor<?x?x120xbf16>
  %t = tensor.dim %qkv, %c1 : tensor<?x?x120xbf16>
  %bh = arith.muli %b, %nheads : index
  %q2 = tensor.extract_slice %qkv[0, 0, 0] [%b, %t, 40] [1, 1, 1] : tensor<?x?x120xbf16> to tensor<?x?x40xbf16>
  %q4 = tensor.expand_shape %q2 [[0], [1], [2, 3]] output_shape [%b, %t, 2, 20] : tensor<?x?x40xbf16> into tensor<?x?x2x20xbf16>
  %qe = tensor.empty(%b, %t) : tensor<?x2x?x20xbf16>
  %qt = linalg.transpose ins(%q4 : tensor<?x?x2x20xbf16>) outs(%qe : tensor<?x2x?x20xbf16>) permutation = [0, 2, 1, 3]
  %k2 = tensor.extract_slice %qkv[0, 0, 40] [%b, %t, 40] [1, 1, 1] : tensor<?x?x120xbf16> to tensor<?x?x40xbf16>
  %k4 = tensor.expand_shape %k2 [[0], [1], [2, 3]] output_shape [%b, %t, 2, 20] : tensor<?x?x40xbf16> into tensor<?x?x2x20xbf16>
  %ke = tensor.empty(%b, %t) : tensor<?x2x20x?xbf16>
  %kt = linalg.transpose ins(%k4 : tensor<?x?x2x20xbf16>) outs(%ke : tensor<?x2x20x?xbf16>) permutation = [0, 2, 3, 1]
  %qc = tensor.collapse_shape %qt [[0, 1], [2], [3]] : tensor<?x2x?x20xbf16> into tensor<?x?x20xbf16>
  %kc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<?x2x20x?xbf16> into tensor<?x20x?xbf16>
  %es = tensor.empty(%bh, %t, %t) : tensor<?x?x?xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %s = linalg.batch_matmul ins(%qc, %kc : tensor<?x?x20xbf16>, tensor<?x20x?xbf16>) outs(%fs : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %s : tensor<?x?x?xf32>
}

func.func @context(%p: tensor<?x?x?xbf16>, %qkv: tensor<?x?x120xbf16>) -> tensor<?x?x20xf32> {
  %nheads = arith.constant 2 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %qkv, %c0 : tensor<?x?x120xbf16>
  %t = tensor.dim %qkv, %c1 : tensor<?x?x120xbf16>
  %bh = arith.muli %b, %nheads : index
  %v2 = tensor.extract_slice %qkv[0, 0, 80] [%b, %t, 40] [1, 1, 1] : tensor<?x?x120xbf16> to tensor<?x?x40xbf16>
  %v4 = tensor.expand_shape %v2 [[0], [1], [2, 3]] output_shape [%b, %t, 2, 20] : tensor<?x?x40xbf16> into tensor<?x?x2x20xbf16>
  %ve = tensor.empty(%b, %t) : tensor<?x2x?x20xbf16>
  %vt = linalg.transpose ins(%v4 : tensor<?x?x2x20xbf16>) outs(%ve : tensor<?x2x?x20xbf16>) permutation = [0, 2, 1, 3]
  %vc = tensor.collapse_shape %vt [[0, 1], [2], [3]] : tensor<?x2x?x20xbf16> into tensor<?x?x20xbf16>
  %eo = tensor.empty(%bh, %t) : tensor<?x?x20xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<?x?x20xf32>) -> tensor<?x?x20xf32>
  %o = linalg.batch_matmul ins(%p, %vc : tensor<?x?x?xbf16>, tensor<?x?x20xbf16>) outs(%fo : tensor<?x?x20xf32>) -> tensor<?x?x20xf32>
  return %o : tensor<?x?x20xf32>
}


// CHECK:       #[[$A:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d4)>
// CHECK:       #[[$KT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d4)>
// CHECK:       #[[$C:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0 * 2 + d1, d2, d3)>
// CHECK:       #[[$P:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0 * 2 + d1, d2, d4)>
// CHECK:       #[[$V:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d1, d3)>
// CHECK-LABEL: func.func @scores(
// CHECK-NOT:     linalg.transpose
// CHECK:         call @ftuner_amx_dispatch_batch_matmul_32x32_b1024k_p2_av0213_bv0231_h2_z(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?x?x?x?xbf16>, tensor<?x?x?x?xbf16>, tensor<?x?x?xf32>)
// CHECK-LABEL: func.func @context(
// CHECK-NOT:     linalg.transpose
// CHECK:         call @ftuner_amx_dispatch_batch_matmul_32x32_b1024k_p2_bv0213_h2_z(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?x?x?xbf16>, tensor<?x?x?x?xbf16>, tensor<?x?x?xf32>)
// CHECK-LABEL: func.func private @ftuner_amx_dispatch_batch_matmul_32x32_b1024k_p2_av0213_bv0231_h2_z(
// CHECK-SAME:      ftuner.amx_head_views = {a = array<i64: 0, 2, 1, 3>, b = array<i64: 0, 2, 3, 1>}
// CHECK:         linalg.fill
// CHECK:         linalg.generic {indexing_maps = [#[[$A]], #[[$KT]], #[[$C]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK:           arith.extf
// CHECK:           arith.extf
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK-LABEL: func.func private @ftuner_amx_dispatch_batch_matmul_32x32_b1024k_p2_bv0213_h2_z(
// CHECK-SAME:      ftuner.amx_head_views = {b = array<i64: 0, 2, 1, 3>}
// CHECK:         linalg.generic {indexing_maps = [#[[$P]], #[[$V]], #[[$C]]]

// BODY-LABEL: IR Dump After ftuner-build-amx-bodies
// BODY:       func.func private @ftuner_amx_dispatch_batch_matmul_32x32_b1024k_p2_av0213_bv0231_h2_z(%{{.*}}: memref<?x?x?x?xbf16, {{.*}}>, %{{.*}}: memref<?x?x?x?xbf16, {{.*}}>, %{{.*}}: memref<?x?x?xf32, {{.*}}>)
// BODY-SAME:    ftuner.dispatch = "batch_matmul"
// BODY:         scf.forall (%[[TASK:[^,]+]], %{{[^,]+}}, %{{[^)]+}}) =
// BODY:           %[[ENTRY:.+]] = arith.divui %[[TASK]], %{{.+}} : index
// BODY:           %[[QS:.+]] = memref.subview %{{.+}}[%[[ENTRY]], 0, %{{.+}}, 0] [1, %{{.+}}, %{{.+}}, %{{.+}}] [1, 1, 1, 1] : memref<?x?x?x?xbf16, strided<[?, ?, ?, 1], offset: ?>> to memref<?x?x?xbf16, strided<[?, ?, 1], offset: ?>>
// BODY:           %[[Q:.+]] = memref.transpose %[[QS]] (d0, d1, d2) -> (d1, d0, d2)
// BODY:           %[[KS:.+]] = memref.subview %{{.+}}[%[[ENTRY]], 0, %{{.+}}, 0] [1, %{{.+}}, %{{.+}}, %{{.+}}] [1, 1, 1, 1] : memref<?x?x?x?xbf16, strided<[?, ?, ?, 1], offset: ?>> to memref<?x?x?xbf16, strided<[?, ?, 1], offset: ?>>
// BODY:           %[[K:.+]] = memref.transpose %[[KS]] (d0, d1, d2) -> (d1, d0, d2)
// BODY:             %[[KM:.+]] = memref.subview %[[K]][%{{.+}}, 0, 0] [1, %{{.+}}, %{{.+}}] [1, 1, 1]
// BODY:             func.call @ftuner_vnni_pack_bt(%[[KM]],
// BODY:             func.call @ftuner_amx_rows_32_n32_kc256_group_z(%[[Q]],
// BODY-NOT:       linalg.generic
// BODY-LABEL: func.func private @ftuner_amx_dispatch_batch_matmul_32x32_b1024k_p2_bv0213_h2_z(
// BODY:             func.call @ftuner_vnni_pack_b(
