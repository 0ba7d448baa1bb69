// RUN: ftuner-opt %s --target=intel-spr --ftuner-bf16-memory-as-i16 | FileCheck %s

// Every LLVM load and store of bf16, scalar, vector or masked, becomes one of i16 with a bitcast: the
// x86 backend would carry bf16 through fp32 and call __truncsfbf2, which libgcc lacks.
llvm.func @moves(%p: !llvm.ptr, %q: !llvm.ptr, %m: vector<16xi1>) {
  %s = llvm.load %p : !llvm.ptr -> bf16
  llvm.store %s, %q : bf16, !llvm.ptr
  %v = llvm.load %p : !llvm.ptr -> vector<16xbf16>
  llvm.store %v, %q : vector<16xbf16>, !llvm.ptr
  %pass = llvm.mlir.zero : vector<16xbf16>
  %w = llvm.intr.masked.load %p, %m, %pass {alignment = 2 : i32} : (!llvm.ptr, vector<16xi1>, vector<16xbf16>) -> vector<16xbf16>
  llvm.intr.masked.store %w, %q, %m {alignment = 2 : i32} : vector<16xbf16>, vector<16xi1> into !llvm.ptr
  %f = llvm.load %p : !llvm.ptr -> f32
  llvm.store %f, %q : f32, !llvm.ptr
  llvm.return
}

// CHECK-LABEL: llvm.func @moves(
// CHECK-NOT:     -> bf16
// CHECK-NOT:     : bf16, !llvm.ptr
// CHECK:         %[[S:.+]] = llvm.load %{{.+}} : !llvm.ptr -> i16
// CHECK:         %[[SB:.+]] = llvm.bitcast %[[S]] : i16 to bf16
// CHECK:         %[[SI:.+]] = llvm.bitcast %[[SB]] : bf16 to i16
// CHECK:         llvm.store %[[SI]], %{{.+}} : i16, !llvm.ptr
// CHECK:         llvm.load %{{.+}} : !llvm.ptr -> vector<16xi16>
// CHECK:         llvm.store %{{.+}}, %{{.+}} : vector<16xi16>, !llvm.ptr
// CHECK:         llvm.intr.masked.load %{{.+}}, %{{.+}}, %{{.+}} {alignment = 2 : i32} : (!llvm.ptr, vector<16xi1>, vector<16xi16>) -> vector<16xi16>
// CHECK:         llvm.intr.masked.store %{{.+}}, %{{.+}}, %{{.+}} {alignment = 2 : i32} : vector<16xi16>, vector<16xi1> into !llvm.ptr
// CHECK:         llvm.load %{{.+}} : !llvm.ptr -> f32
// CHECK:         llvm.store %{{.+}}, %{{.+}} : f32, !llvm.ptr
