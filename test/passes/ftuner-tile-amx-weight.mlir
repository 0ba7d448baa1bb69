// RUN: ftuner-opt %s --target=intel-spr --ftuner-select-ukernels --ftuner-tile | FileCheck %s
// RUN: ftuner-opt %s --target=intel-spr --ftuner-cpu-pipeline --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=BODY

// A constant bf16 weight (K = 40: one full K step and a partial one; N = 20: a full panel and a partial
// one) is packed into VNNI panels at compile time: [2 panels x 32 rows, 32], the dispatch reads each
// task's panels in place (no pack call), and the weight as stored is gone.
func.func @dense(%x: tensor<?x40xbf16>) -> tensor<?x20xf32> {
  %c0 = arith.constant 0 : index
  %w = arith.constant dense<1.5> : tensor<20x40xbf16>
  %m = tensor.dim %x, %c0 : tensor<?x40xbf16>
  %empty = tensor.empty(%m) : tensor<?x20xf32>
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x20xf32>) -> tensor<?x20xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<?x40xbf16>, tensor<20x40xbf16>) outs(%init : tensor<?x20xf32>) -> tensor<?x20xf32>
  return %r : tensor<?x20xf32>
}

// the placeholder reads the panels where the pack put (column n, reduction index k)
// CHECK:       #[[$PANEL_MAP:.*]] = affine_map<(d0, d1, d2) -> ((d1 floordiv 16) * 32 + d2 floordiv 2, (d1 mod 16) * 2 + d2 mod 2)>
// CHECK-LABEL: func.func @dense
// CHECK:         %[[PANELS:.*]] = arith.constant dense_resource<ftuner_vnni_panels> : tensor<64x32xbf16>
// CHECK-NOT:     tensor<20x40xbf16>
// CHECK:         call @[[DISPATCH:ftuner_amx_dispatch_matmul_transpose_b_32x32_b1024k_p2_pw32_z]]
// CHECK:       func.func private @[[DISPATCH]]({{.*}}) -> tensor<?x?xf32> attributes {{{.*}}ftuner.amx_prepacked = 32 : i64
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[$PANEL_MAP]], #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]}

// BODY-LABEL: IR Dump After ftuner-build-amx-bodies
// BODY:       func.func private @ftuner_amx_dispatch_matmul_transpose_b_32x32_b1024k_p2_pw32_z(
// BODY:         scf.forall
// BODY:           memref.subview {{.*}} to memref<?x32xbf16, strided<[32, 1], offset: ?>>
// BODY-NOT:       call @ftuner_amx_pack
// BODY:           call @ftuner_amx_rows_32_n32_kc256_z
// BODY-LABEL: IR Dump After
