// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-select-ukernels --ftuner-tile --mlir-print-debuginfo | FileCheck %s

// The functions the tile pass generates are located at the op that needed them, under their own
// name: a diagnostic in generated code points at the user's matmul (this file, line 16), never at a line
// of the generated text (which the user never saw, parsed as "-").
// CHECK-NOT:   loc("-"
// CHECK:       #[[USER:loc[0-9]*]] = loc("{{.*}}ftuner-tile-locations.mlir":16:8)
// CHECK-NOT:   loc("-"
// CHECK:       loc("ftuner_dispatch_matmul_8x32_{{.*}}"(#[[USER]]))
// CHECK-NOT:   loc("-"
// CHECK:       loc("ftuner_rows_8_n32_f32"(#[[USER]]))
// CHECK-NOT:   loc("-"
// CHECK:       loc("ftuner_uk_matmul_8xm32_f32"(#[[USER]]))
// CHECK-NOT:   loc("-"
func.func @matmul(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
