// RUN: ftuner-opt %s --target=intel-spr --ftuner-select-ukernels --ftuner-tile --ftuner-destination-abi '--one-shot-bufferize=bufferize-function-boundaries=1 function-boundary-type-conversion=fully-dynamic-layout-map' --drop-equivalent-buffer-results --ftuner-build-amx-bodies | FileCheck %s

// On buffers, the AMX placeholder of a bf16 Dense (its body the op itself) is replaced by its tile code:
// blocks over the cores, the B block packed into VNNI panels, one function per row-strip size, tiles
// loaded, multiplied and stored by the amx dialect; the module is marked as needing the tile state.
func.func @dense(%x: tensor<?x768xbf16>, %w: tensor<2304x768xbf16>) -> tensor<?x2304xf32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x768xbf16>
  %empty = tensor.empty(%m) : tensor<?x2304xf32>
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x2304xf32>) -> tensor<?x2304xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<?x768xbf16>, tensor<2304x768xbf16>) outs(%init : tensor<?x2304xf32>) -> tensor<?x2304xf32>
  return %r : tensor<?x2304xf32>
}

// CHECK:       module attributes {ftuner.uses_amx}
// CHECK-LABEL: func.func private @ftuner_amx_dispatch_matmul_transpose_b_32x32_b1024k_p2_z(
// CHECK-SAME:      memref<?x?xbf16, strided<[?, ?], offset: ?>>, %{{[^:]+}}: memref<?x?xbf16, strided<[?, ?], offset: ?>>, %{{[^:]+}}: memref<?x?xf32, strided<[?, ?], offset: ?>>)
// CHECK-NOT:     linalg.matmul
// CHECK:         %[[X:.+]] = memref.cast %arg0
// CHECK:         %[[W:.+]] = memref.cast %arg1
// CHECK:         %[[C:.+]] = memref.cast %arg2
// Few rows (bf16_space.transposed_pays: m (k + 8 n) <= n k) run the transposed product C^T = W.X^T: W read
// in place by the A tiles, X packed as the B panels, the row strips of the transposed kind (_ct).
// CHECK:         %[[PAYS:.+]] = arith.cmpi ule
// CHECK:         %[[FLAG:.+]] = arith.select %[[PAYS]]
// CHECK:         %[[FEW:.+]] = arith.cmpi eq, %[[FLAG]]
// CHECK:         scf.if %[[FEW]] {
// CHECK:           scf.forall
// CHECK:             call @ftuner_vnni_pack_bt(%[[X]],
// CHECK:             call @ftuner_amx_rows_32_n32_kc256_ct_z(%[[W]], %{{[^,]+}}, %{{[^,]+}}, %[[C]],
// CHECK:             call @ftuner_amx_rows_1_n32_kc256_ct_z(%[[W]],
// CHECK:         } else {
// CHECK:           scf.forall
// CHECK:             memref.alloc(%{{.+}}) {alignment = 64 : i64} : memref<?x32xbf16>
// CHECK:             call @ftuner_vnni_pack_bt(%[[W]],
// CHECK:             call @ftuner_amx_rows_32_n32_kc256_z(%[[X]],
// CHECK:             call @ftuner_amx_rows_16_n32_kc256_z(
// CHECK:             call @ftuner_amx_rows_8_n32_kc256_z(
// CHECK:             call @ftuner_amx_rows_4_n32_kc256_z(
// CHECK:             call @ftuner_amx_rows_2_n32_kc256_z(
// CHECK:             call @ftuner_amx_rows_1_n32_kc256_z(
// The transposing pack: the interior (whole panels, whole K steps) by 16 plain loads of 32 K, their K
// pairs transposed as 16 x 16 i32 in 64 two-source shuffles, 16 panel rows stored; then the rim (the
// partial K step, the panels past the interior) the same under masks (reads past B give zeros).
// CHECK-LABEL: func.func private @ftuner_vnni_pack_bt(
// CHECK:         scf.for
// CHECK-NEXT:      scf.for
// CHECK-NOT:         vector.create_mask
// CHECK-COUNT-16:    vector.transfer_read %arg0[%{{.+}}, %{{.+}}], %{{[^,]+}} {in_bounds = [true]} : memref<?x?xbf16, strided<[?, 1], offset: ?>>, vector<32xbf16>
// CHECK-COUNT-64:    vector.shuffle {{.*}} : vector<16xi32>, vector<16xi32>
// CHECK-COUNT-16:    vector.transfer_write {{.*}} : vector<32xbf16>, memref<?x32xbf16, strided<[32, 1], offset: ?>>
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             %[[LIVE:.+]] = vector.create_mask %{{.+}} : vector<32xi1>
// CHECK:             vector.transfer_read %arg0[%{{.+}}, %{{.+}}], %{{[^,]+}}, %[[LIVE]] {in_bounds = [true]}
// The 32-row strip: 2x2 C tiles zeroed on the first K chunk, carried through the K loop.
// CHECK-LABEL: func.func private @ftuner_amx_rows_32_n32_kc256_z(
// CHECK:         amx.tile_zero : !amx.tile<16x16xf32>
// CHECK:         scf.for {{.*}} -> (!amx.tile<16x16xf32>, !amx.tile<16x16xf32>, !amx.tile<16x16xf32>, !amx.tile<16x16xf32>)
// CHECK-COUNT-2:   amx.tile_load %{{.+}} : memref<?x?xbf16, strided<[?, 1], offset: ?>> into !amx.tile<16x32xbf16>
// CHECK-COUNT-2:   amx.tile_load %{{.+}} : memref<?x32xbf16, strided<[32, 1], offset: ?>> into !amx.tile<16x32xbf16>
// CHECK-COUNT-4:   amx.tile_mulf
// CHECK-COUNT-4: amx.tile_store
// The transposed product's 32-row strip: C stays in the tiles for the whole K (one chunk); each C tile is
// stored to the scratch, its 16 rows read back, transposed in 64 shuffles and written to C as 16 rows
// of C's (16 columns of the product).
// CHECK-LABEL: func.func private @ftuner_amx_rows_32_n32_kc256_ct_z(
// CHECK:         scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c1099511627776
// CHECK:           amx.tile_mulf
// CHECK:         amx.tile_store %arg4[%{{.+}}, %{{.+}}], %{{.+}} : memref<32x16xf32>, !amx.tile<16x16xf32>
// CHECK-COUNT-16: vector.transfer_read %arg4
// CHECK-COUNT-64: vector.shuffle {{.*}} : vector<16xf32>, vector<16xf32>
// CHECK-COUNT-16: vector.transfer_write %{{.+}}, %arg3[%{{.+}}, %{{.+}}] {in_bounds = [true]} : vector<16xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK-LABEL: func.func private @ftuner_amx_rows_1_n32_kc256_z(
