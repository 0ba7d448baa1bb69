// RUN: ftuner-opt %s --target=amd-zen4 --ftuner-cpu-pipeline --mlir-print-ir-after-all -o %t 2>&1 | FileCheck %s --check-prefix=BODY
// RUN: FileCheck %s --check-prefix=LLVM < %t
// RUN: ftuner-opt %s --target=intel-spr,bf16_engine=avx512_bf16 --ftuner-select-ukernels | FileCheck %s --check-prefix=SLOW
// RUN: not ftuner-opt %s --target=x86-avx2,bf16_engine=avx512_bf16 --ftuner-select-ukernels 2>&1 | FileCheck %s --check-prefix=BADSPEC

// The same bf16 Dense on Zen 4, whose bf16 engine is AVX512-BF16 (vdpbf16ps: 16 fp32 lanes, each adding
// a bf16 pair's products; on Zen 4 twice the fp32 FMAs' flops). The dispatch is the AMX one (blocks over
// the cores, B packed into the same VNNI panels), with the fp32 model's register block: 8 rows x 2 panels
// of fp32 accumulator vectors, row remainders of 4, 2, 1. Each K pair: one 32 x bf16 vector per panel,
// A's pair broadcast as one i32, then a dot product per accumulator.
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

// BODY-LABEL: IR Dump After ftuner-build-amx-bodies
// BODY:       func.func private @ftuner_avx512bf16_dispatch_matmul_transpose_b_8x32_b512k_p2_z(
// BODY-SAME:    engine = "avx512_bf16"{{.*}}k_chunk = 672 : i64, mr = 8 : i64, nr = 32 : i64
// BODY:         scf.forall
// BODY:           call @ftuner_vnni_pack_bt
// BODY:           call @ftuner_avx512bf16_rows_8_n32_kc672_z
// BODY:           call @ftuner_avx512bf16_rows_4_n32_kc672_z
// BODY:           call @ftuner_avx512bf16_rows_2_n32_kc672_z
// BODY:           call @ftuner_avx512bf16_rows_1_n32_kc672_z
// BODY-NOT:       amx.
// BODY-LABEL: func.func private @ftuner_avx512bf16_rows_8_n32_kc672_z(
// BODY:         scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// BODY-COUNT-2: vector.transfer_read {{.*}} : memref<?x32xbf16, strided<[32, 1], offset: ?>>, vector<32xbf16>
// BODY:           vector.transfer_read {{.*}} : memref<?x?xbf16, strided<[?, 1], offset: ?>>, vector<2xbf16>
// BODY:           vector.bitcast {{.*}} : vector<2xbf16> to vector<1xi32>
// BODY:           vector.broadcast {{.*}} : vector<1xi32> to vector<16xi32>
// BODY:           vector.bitcast {{.*}} : vector<16xi32> to vector<32xbf16>
// BODY-COUNT-2:   x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>
// BODY-NOT:     amx.

// LLVM:       llvm.func @ftuner_avx512bf16_rows_8_n32_kc672_z(
// LLVM:         llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"
// LLVM-NOT:     tdpbf16ps

// On Sapphire Rapids, vdpbf16ps does half the fp32 FMAs' flops: a target whose bf16
// engine is AVX512-BF16 there widens to the fp32 uKernels.
// SLOW-LABEL: func.func @dense
// SLOW:         arith.extf {{.*}} : bf16 to f32
// SLOW:         linalg.matmul {{.*}}ftuner.ukernels = {{.*}}dtype = "f32"
// SLOW-NOT:     ftuner.amx_ukernels

// BADSPEC: bf16_engine=avx512_bf16 needs an avx512 target; x86-avx2 is avx2
