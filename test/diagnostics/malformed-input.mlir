// RUN: not ftuner-opt %s --ftuner-cpu-pipeline 2>&1 | FileCheck %s
// RUN: not ftuner-opt --ftuner-tile < %s 2>&1 | FileCheck %s --check-prefix=STDIN

// CHECK-NOT:  Traceback
// CHECK:      malformed-input.mlir:[[@LINE+4]]:{{[0-9]+}}: error: use of undeclared SSA value name
// CHECK-NOT:  Traceback
// STDIN:      <stdin>:[[@LINE+2]]:{{[0-9]+}}: error: use of undeclared SSA value name
func.func @f(%a: tensor<?xf32>) -> tensor<?xf32> {
  %0 = arith.addf %a, %undefined : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// RUN: not ftuner-opt %s 2>&1 | FileCheck %s --check-prefix=CARET
// The source line and a caret under the column follow the diagnostic.
// CARET:      error: use of undeclared SSA value name
// CARET-NEXT: {{^}}  %0 = arith.addf %a, %undefined : tensor<?xf32>
// CARET-NEXT: {{^                       \^$}}
