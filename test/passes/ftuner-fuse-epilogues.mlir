// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-select-ukernels --ftuner-tile --ftuner-fuse-epilogues | FileCheck %s
// RUN: ftuner-opt %s --target=x86-avx2 --ftuner-select-ukernels --ftuner-tile --ftuner-fuse-epilogues | FileCheck %s --check-prefix=AVX2

// A linear layer's bias add and ReLU, the matmul's only consumer, runs inside a copy of its dispatch on
// each block after the block's last reduction block: the copy takes the bias as an extra argument,
// and the caller no longer runs the generic.
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

// CHECK-LABEL: func.func @linear_relu(
// CHECK-SAME:      %[[A:[^:]+]]: tensor<?x?xf32>, %[[B:[^:]+]]: tensor<?x?xf32>, %[[BIAS:[^:]+]]: tensor<?xf32>)
// CHECK:         %[[R:.+]] = call @[[$EP:ftuner_dispatch_matmul_.*_ep0]](%[[A]], %[[B]], %{{.+}}, %[[BIAS]])
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[R]]
// The copy runs the epilogue on each block: the block's slice of the bias, 16 columns a step, the
// remainder masked, after the last reduction block.
// CHECK:       func.func private @[[$EP]](
// CHECK-SAME:      %{{[^:]+}}: tensor<?x?xf32>, %{{[^:]+}}: tensor<?x?xf32>, %{{[^:]+}}: tensor<?x?xf32>, %[[EB:[^:]+]]: tensor<?xf32>)
// CHECK-SAME:      ftuner.epilogue = 1
// CHECK:         scf.forall
// CHECK:           scf.for {{.*}} step %c128
// CHECK:           tensor.extract_slice %[[EB]]
// CHECK:           scf.for
// CHECK:             scf.for {{.*}} step %c16
// CHECK:               arith.addf %{{.+}}, %{{.+}} : vector<16xf32>
// CHECK:               arith.maximumf %{{.+}}, %{{.+}} : vector<16xf32>
// CHECK:             scf.for {{.*}} step %c16
// CHECK:               vector.mask
// CHECK:               arith.maximumf %{{.+}}, %{{.+}} : vector<16xf32>
// On an AVX2 target the epilogue runs 8 columns a step (the script's vector width is the target's).
// AVX2-LABEL: func.func private @ftuner_dispatch_matmul_{{.*}}_ep0(
// AVX2:           scf.for {{.*}} step %c8
// AVX2:             arith.maximumf %{{.+}}, %{{.+}} : vector<8xf32>
