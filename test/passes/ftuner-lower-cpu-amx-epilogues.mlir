// RUN: ftuner-opt %s --target=intel-spr --ftuner-select-ukernels=matmul-precision=bf16 --ftuner-tile --ftuner-lower-cpu --mlir-print-ir-after-all -o /dev/null 2> %t
// RUN: FileCheck %s < %t
// RUN: FileCheck %s --check-prefix=FFN < %t
// RUN: FileCheck %s --check-prefix=TWO < %t

// An fp32 linear layer whose matmul runs on AMX in bf16 (matmul_precision=bf16), followed by its bias,
// a scale and a ReLU read through the expand_shape that splits the rows into (batch, T): the consumer
// becomes the epilogue of the AMX placeholder's copy (a 2-D generic on C marked
// ftuner.amx_epilogue_op), and on buffers each row-strip function of that copy runs it as vector code
// on its strip once the strip's reduction is done: C read, bias read, the body on vector<16xf32>,
// C written once (the last 16 columns of a row under a mask). No elementwise pass over C remains.
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col3 = affine_map<(d0, d1, d2) -> (d2)>
func.func @ffn_in(%x: tensor<4x?x64xf32>, %w: tensor<256x64xf32>, %bias: tensor<256xf32>) -> tensor<4x?x256xf32> {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %t = tensor.dim %x, %c1 : tensor<4x?x64xf32>
  %rows = arith.muli %t, %c4 : index
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<4x?x64xf32> into tensor<?x64xf32>
  %e = tensor.empty(%rows) : tensor<?x256xf32>
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x256xf32>) -> tensor<?x256xf32>
  %mm = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                       affine_map<(m, n, k) -> (m, n)>]
      ins(%flat, %w : tensor<?x64xf32>, tensor<256x64xf32>) outs(%init : tensor<?x256xf32>) -> tensor<?x256xf32>
  %mm3 = tensor.expand_shape %mm [[0, 1], [2]] output_shape [4, %t, 256] : tensor<?x256xf32> into tensor<4x?x256xf32>
  %e3 = tensor.empty(%t) : tensor<4x?x256xf32>
  %half = arith.constant 0.5 : f32
  %r = linalg.generic {indexing_maps = [#id3, #col3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mm3, %bias : tensor<4x?x256xf32>, tensor<256xf32>) outs(%e3 : tensor<4x?x256xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    %h = arith.mulf %s, %half : f32
    %v = arith.maximumf %h, %zero : f32
    linalg.yield %v : f32
  } -> tensor<4x?x256xf32>
  return %r : tensor<4x?x256xf32>
}

// Two chained linear layers: the first one's bias and ReLU, and the rounding of its result to bf16 for
// the second matmul (one generic after elementwise fusion), are its epilogue, a narrowing one: that
// dispatch writes bf16 C, its fp32 C tiles kept in a scratch strip of its own; no rounding pass over
// the hidden activations is left.
#id2 = affine_map<(i, j) -> (i, j)>
#col2 = affine_map<(i, j) -> (j)>
func.func @ffn(%x: tensor<?x?xf32>, %w1: tensor<?x?xf32>, %b1: tensor<?xf32>, %w2: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %x, %c0 : tensor<?x?xf32>
  %h = tensor.dim %w1, %c1 : tensor<?x?xf32>
  %n = tensor.dim %w2, %c1 : tensor<?x?xf32>
  %e1 = tensor.empty(%m, %h) : tensor<?x?xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<?x?xf32>) -> tensor<?x?xf32>
  %mm1 = linalg.matmul ins(%x, %w1 : tensor<?x?xf32>, tensor<?x?xf32>) outs(%i1 : tensor<?x?xf32>) -> tensor<?x?xf32>
  %a1 = linalg.generic {indexing_maps = [#id2, #col2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm1, %b1 : tensor<?x?xf32>, tensor<?xf32>) outs(%e1 : tensor<?x?xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    %v = arith.maximumf %s, %zero : f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  %e2 = tensor.empty(%m, %n) : tensor<?x?xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x?xf32>) -> tensor<?x?xf32>
  %y = linalg.matmul ins(%a1, %w2 : tensor<?x?xf32>, tensor<?x?xf32>) outs(%i2 : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// The same, the second matmul's rows read from the hidden activations' size: that tensor.dim keeps
// upstream elementwise fusion from merging the ReLU into the rounding, so the dispatch takes two
// epilogues, the ReLU in place on the fp32 product, then the rounding into bf16 C.
func.func @ffn_two_stages(%x: tensor<?x?xf32>, %w1: tensor<?x?xf32>, %b1: tensor<?xf32>, %w2: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %x, %c0 : tensor<?x?xf32>
  %h = tensor.dim %w1, %c1 : tensor<?x?xf32>
  %n = tensor.dim %w2, %c1 : tensor<?x?xf32>
  %e1 = tensor.empty(%m, %h) : tensor<?x?xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<?x?xf32>) -> tensor<?x?xf32>
  %mm1 = linalg.matmul ins(%x, %w1 : tensor<?x?xf32>, tensor<?x?xf32>) outs(%i1 : tensor<?x?xf32>) -> tensor<?x?xf32>
  %a1 = linalg.generic {indexing_maps = [#id2, #col2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm1, %b1 : tensor<?x?xf32>, tensor<?xf32>) outs(%e1 : tensor<?x?xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    %v = arith.maximumf %s, %zero : f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  %m2 = tensor.dim %a1, %c0 : tensor<?x?xf32>
  %e2 = tensor.empty(%m2, %n) : tensor<?x?xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x?xf32>) -> tensor<?x?xf32>
  %y = linalg.matmul ins(%a1, %w2 : tensor<?x?xf32>, tensor<?x?xf32>) outs(%i2 : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// CHECK-LABEL: IR Dump After ftuner-fuse-epilogues
// CHECK:       func.func @ffn_in(
// CHECK:         call @[[$COPY:ftuner_amx_dispatch_matmul_transpose_b_32x32_b1024k_p2_z_ep[0-9]+]]({{.*}}) : (tensor<?x?xbf16>, tensor<?x?xbf16>, tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
// CHECK-NOT:     arith.maximumf
// CHECK:         return
// CHECK:       func.func private @[[$COPY]](
// CHECK:         linalg.matmul
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%{{.*}} : tensor<?xf32>) outs(%{{.*}} : tensor<?x?xf32>) attrs =  {ftuner.amx_epilogue_op}
// CHECK:           arith.addf
// CHECK:           arith.mulf
// CHECK:           arith.maximumf

// CHECK-LABEL: IR Dump After ftuner-build-amx-bodies
// CHECK:       func.func private @[[$COPY]](
// CHECK:         scf.forall
// CHECK:           call @[[ROWS:ftuner_amx_rows_32_n32_kc256_z_of_ftuner_amx_dispatch_matmul_transpose_b_32x32_b1024k_p2_z_ep[0-9]+]]({{.*}}) {no_inline} : ({{.*}}, memref<?xf32, strided<[1], offset: ?>>) -> ()
// CHECK:           call @ftuner_amx_rows_1_n32_kc256_z_of_
// CHECK:       func.func private @[[ROWS]](
// CHECK:         amx.tile_mulf
// CHECK:         amx.tile_store
// The epilogue, after the strip's K chunks: every row, 16 columns a step, then the masked rest.
// CHECK:             %[[C:.+]] = vector.transfer_read %[[CBUF:arg[0-9]+]][%[[ROW:arg[0-9]+]], %[[AT:[0-9]+]]], %{{[a-z_0-9]+}} {in_bounds = [true]} : memref<?x?xf32, strided<[?, 1], offset: ?>>, vector<16xf32>
// CHECK-NEXT:        %[[BIAS:.+]] = vector.transfer_read %{{.*}}[%[[AT]]], %{{[a-z_0-9]+}} {in_bounds = [true]} : memref<?xf32, strided<[1], offset: ?>>, vector<16xf32>
// CHECK-NEXT:        %[[SUM:.+]] = arith.addf %[[C]], %[[BIAS]] : vector<16xf32>
// CHECK:             %[[HALF:.+]] = arith.mulf %[[SUM]], %{{.*}} : vector<16xf32>
// CHECK:             %[[RELU:.+]] = arith.maximumf %[[HALF]], %{{.*}} : vector<16xf32>
// CHECK-NEXT:        vector.transfer_write %[[RELU]], %[[CBUF]][%[[ROW]], %[[AT]]] {in_bounds = [true]}
// CHECK:           vector.transfer_read %[[CBUF]][%[[ROW]], %{{.*}}], %{{.*}}, %[[MASK:.+]] {in_bounds = [true]}
// CHECK:           arith.maximumf
// CHECK:           vector.transfer_write %{{.*}}, %[[CBUF]][%[[ROW]], %{{.*}}], %[[MASK]] {in_bounds = [true]}
// CHECK:         return

// FFN-LABEL: IR Dump After ftuner-fuse-epilogues
// FFN:       func.func @ffn(
// FFN:         %[[H:.+]] = call @[[$NARROW:ftuner_amx_dispatch_matmul_32x32_b1024k_p2_z_ep[0-9_ep]+]]({{.*}}) : (tensor<?x?xbf16>, tensor<?x?xbf16>, tensor<?x?xbf16>, tensor<?xf32>) -> tensor<?x?xbf16>
// FFN:         call @ftuner_amx_dispatch_matmul_32x32_b1024k_p2_z(%[[H]],
// FFN:       func.func private @[[$NARROW]](%{{.*}}: tensor<?x?xbf16>, %{{.*}}: tensor<?x?xbf16>, %[[C:.+]]: tensor<?x?xbf16>, %{{.*}}: tensor<?xf32>) -> tensor<?x?xbf16>
// FFN:         %[[P:.+]] = tensor.empty({{.*}}) : tensor<?x?xf32>
// FFN:         linalg.fill {{.*}} outs(%[[P]] : tensor<?x?xf32>)
// FFN:         %[[MM:.+]] = linalg.matmul
// FFN:         linalg.generic {{.*}} ins(%{{.*}}, %[[MM]] : tensor<?xf32>, tensor<?x?xf32>) outs(%[[C]] : tensor<?x?xbf16>) attrs =  {ftuner.amx_epilogue_op}
// FFN:           arith.maximumf
// FFN:           arith.trunci
// FFN-LABEL: IR Dump After ftuner-build-amx-bodies
// FFN:       func.func private @[[$NARROW]](
// FFN:         scf.forall
// FFN:           %[[STRIP:.+]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<32x?xf32>
// FFN:           %[[SCRATCH_C:.+]] = memref.cast %[[STRIP]]
// FFN:           call @[[ROWS:ftuner_amx_rows_32_n32_kc256_z_of_[a-z0-9_]+]](%{{.*}}, %{{.*}}, %{{.*}}, %[[SCRATCH_C]], {{.*}}) {no_inline} : ({{.*}}, memref<?xf32, strided<[1], offset: ?>>, memref<?x?xbf16, strided<[?, 1], offset: ?>>) -> ()
// FFN:       func.func private @[[ROWS]](
// FFN:         amx.tile_store
// FFN:         vector.transfer_read %{{.*}} : memref<?x?xf32, strided<[?, 1], offset: ?>>, vector<16xf32>
// FFN:         arith.maximumf {{.*}} : vector<16xf32>
// FFN:         arith.trunci {{.*}} : vector<16xi32> to vector<16xi16>
// FFN:         vector.transfer_write %{{.*}} : vector<16xbf16>, memref<?x?xbf16, strided<[?, 1], offset: ?>>

// TWO-LABEL: IR Dump After ftuner-fuse-epilogues
// TWO:       func.func @ffn_two_stages(
// TWO:         %[[H2:.+]] = call @[[$TWO:ftuner_amx_dispatch_matmul_32x32_b1024k_p2_z_ep[0-9]+_ep[0-9]+]]({{.*}}) -> tensor<?x?xbf16>
// TWO:         call @ftuner_amx_dispatch_matmul_32x32_b1024k_p2_z(%[[H2]],
// TWO:       func.func private @[[$TWO]](%{{.*}}: tensor<?x?xbf16>, %{{.*}}: tensor<?x?xbf16>, %[[C2:.+]]: tensor<?x?xbf16>, %{{.*}}: tensor<?xf32>) -> tensor<?x?xbf16>
// TWO:         %[[MM2:.+]] = linalg.matmul
// TWO:         %[[RELU:.+]] = linalg.generic {{.*}} outs(%[[MM2]] : tensor<?x?xf32>) attrs =  {ftuner.amx_epilogue_op}
// TWO:           arith.maximumf
// TWO:         linalg.generic {{.*}} ins(%[[RELU]] : tensor<?x?xf32>) outs(%[[C2]] : tensor<?x?xbf16>) attrs =  {ftuner.amx_epilogue_op}
// TWO:           arith.trunci
