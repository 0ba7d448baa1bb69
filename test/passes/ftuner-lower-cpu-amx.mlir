// RUN: ftuner-opt %s --target=intel-spr --ftuner-select-ukernels --ftuner-tile | FileCheck %s --check-prefix=TILE
// RUN: ftuner-opt %s --target=intel-spr --ftuner-cpu-pipeline --mlir-print-ir-after-all -o %t 2>&1 | FileCheck %s --check-prefix=BODY
// RUN: FileCheck %s --check-prefix=LLVM < %t
// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-select-ukernels | FileCheck %s --check-prefix=WIDEN

// A bf16 x bf16 -> fp32 Dense on a target with AMX: the hardware model picks 2x2 C tiles (32x32), the op
// becomes a call to a placeholder dispatch on tensors, which gets its AMX body once on buffers:
// blocks over the cores, the B block packed into VNNI panels, one function per row-strip size (16-row
// tiles, then 8, 4, 2, 1 rows), tiles carried through the K loop, lowered to the AMX intrinsics.
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

// TILE-LABEL: func.func @dense
// TILE:         call @[[DISPATCH:ftuner_amx_dispatch_matmul_transpose_b_32x32_b1024k_p2_z]]({{.*}}) : (tensor<?x?xbf16>, tensor<?x?xbf16>, tensor<?x?xf32>) -> tensor<?x?xf32>
// TILE-NOT:     linalg.matmul
// TILE:       func.func private @[[DISPATCH]]({{.*}}) -> tensor<?x?xf32> attributes {ftuner.amx_ukernels = {{{.*}}family = "matmul_transpose_b", k_chunk = 256 : i64, mr = 32 : i64, nr = 32 : i64}, ftuner.zero_init}
// TILE:         linalg.fill
// TILE:         linalg.matmul

// BODY-LABEL: IR Dump After ftuner-build-amx-bodies
// BODY:       func.func private @ftuner_amx_dispatch_matmul_transpose_b_32x32_b1024k_p2_z(%{{.*}}: memref<?x?xbf16, {{.*}}>, %{{.*}}: memref<?x?xbf16, {{.*}}>, %{{.*}}: memref<?x?xf32, {{.*}}>)
// BODY-SAME:    ftuner.dispatch = "matmul_transpose_b"
// BODY:         scf.forall
// BODY:           memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x32xbf16>
// BODY:           call @ftuner_vnni_pack_bt
// BODY:           call @ftuner_amx_rows_32_n32_kc256_z
// BODY:           call @ftuner_amx_rows_16_n32_kc256_z
// BODY:           call @ftuner_amx_rows_8_n32_kc256_z
// BODY:           call @ftuner_amx_rows_4_n32_kc256_z
// BODY:           call @ftuner_amx_rows_2_n32_kc256_z
// BODY:           call @ftuner_amx_rows_1_n32_kc256_z
// BODY-NOT:       linalg.matmul
// BODY-LABEL: func.func private @ftuner_vnni_pack_bt(
// BODY:         vector.transfer_read %{{.*}} {in_bounds = [true]} : memref<?x?xbf16, strided<[?, 1], offset: ?>>, vector<32xbf16>
// BODY-COUNT-64: vector.shuffle {{.*}} : vector<16xi32>, vector<16xi32>
// BODY-LABEL: func.func private @ftuner_amx_rows_32_n32_kc256_z(
// BODY-SAME:    no_inline
// BODY:         amx.tile_zero : !amx.tile<16x16xf32>
// BODY:         scf.for {{.*}} iter_args({{.*}}) -> (!amx.tile<16x16xf32>, !amx.tile<16x16xf32>, !amx.tile<16x16xf32>, !amx.tile<16x16xf32>)
// BODY-COUNT-2:   amx.tile_load %{{.*}} : memref<?x?xbf16, strided<[?, 1], offset: ?>> into !amx.tile<16x32xbf16>
// BODY-COUNT-2:   amx.tile_load %{{.*}} : memref<?x32xbf16> into !amx.tile<16x32xbf16>
// BODY-COUNT-4:   amx.tile_mulf
// BODY:         amx.tile_store
// BODY-LABEL: func.func private @ftuner_amx_rows_1_n32_kc256_z(
// BODY:         amx.tile_load %{{.*}} into !amx.tile<1x32xbf16>
// BODY:         amx.tile_mulf {{.*}} : !amx.tile<1x32xbf16>, !amx.tile<16x32xbf16>, !amx.tile<1x16xf32>

// LLVM:       llvm.func @ftuner_amx_rows_32_n32_kc256_z(
// LLVM:         llvm.call_intrinsic "llvm.x86.tileloadd64.internal"
// LLVM:         llvm.call_intrinsic "llvm.x86.tdpbf16ps.internal"
// LLVM-NOT:   llvm.intr.masked.load {{.*}} -> vector<{{[0-9]+}}xbf16>

// Without AMX, the operands are widened to fp32 and the fp32 uKernels serve the matmul.
// WIDEN-LABEL: func.func @dense
// WIDEN:         arith.extf {{.*}} : bf16 to f32
// WIDEN:         arith.extf {{.*}} : bf16 to f32
// WIDEN:         linalg.matmul {{.*}}ftuner.ukernels = {{.*}}dtype = "f32"{{.*}} ins({{.*}} : tensor<?x768xf32>, tensor<2304x768xf32>)
// WIDEN-NOT:     ftuner.amx_ukernels
