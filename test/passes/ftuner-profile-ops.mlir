// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-profile-ops | FileCheck %s

// Each top-level op of a public function that does work (here a dispatch call and an elementwise op)
// is bracketed by two reads of omp_get_wtime, the difference added atomically to its slot of the
// module's clock global; the module lists the slots (function, kind, label), the whole call first.
!strided = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func private @ftuner_dispatch_mm(%a: !strided, %c: !strided) attributes {ftuner.dispatch = "matmul"}

func.func @mm_relu(%a: memref<?x?xf32>, %c: memref<?x?xf32>) attributes {llvm.emit_c_interface} {
  %as = memref.cast %a : memref<?x?xf32> to !strided
  %cs = memref.cast %c : memref<?x?xf32> to !strided
  call @ftuner_dispatch_mm(%as, %cs) {no_inline} : (!strided, !strided) -> ()
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%c : memref<?x?xf32>) {
  ^bb0(%x: f32):
    %m = arith.maximumf %x, %zero : f32
    linalg.yield %m : f32
  }
  return
}

// CHECK:       module attributes {ftuner.profile_sites = "{{\[\[}}\22mm_relu\22, \22total\22
// CHECK-SAME:    [\22mm_relu\22, \22uKernels\22, \22matmul dispatch at {{.*}}:12:3\22]
// CHECK-SAME:    [\22mm_relu\22, \22elementwise\22, \22linalg.generic at {{.*}}:14:3\22]
// CHECK:       memref.global "private" @ftuner_profile_seconds : memref<3xf64>
// Reading a slot returns its seconds and clears it.
// CHECK-LABEL: func.func @ftuner_take_profile(%{{[^:]+}}: index) -> f64
// CHECK:         memref.load
// CHECK:         memref.store
// CHECK-LABEL: func.func @mm_relu(
// CHECK:         %[[START:.+]] = call @omp_get_wtime() : () -> f64
// CHECK:         %[[T0:.+]] = call @omp_get_wtime() : () -> f64
// CHECK-NEXT:    call @ftuner_dispatch_mm(
// CHECK-NEXT:    %[[T1:.+]] = call @omp_get_wtime() : () -> f64
// CHECK-NEXT:    %[[SPENT:.+]] = arith.subf %[[T1]], %[[T0]] : f64
// CHECK:         memref.atomic_rmw addf %[[SPENT]], %{{.+}}[%c1] : (f64, memref<3xf64>) -> f64
// CHECK:         call @omp_get_wtime() : () -> f64
// CHECK-NEXT:    linalg.generic
// CHECK:         memref.atomic_rmw addf %{{.+}}, %{{.+}}[%c2]
// CHECK:         %[[END:.+]] = call @omp_get_wtime() : () -> f64
// CHECK-NEXT:    %[[TOTAL:.+]] = arith.subf %[[END]], %[[START]] : f64
// CHECK:         memref.atomic_rmw addf %[[TOTAL]], %{{.+}}[%c0]
