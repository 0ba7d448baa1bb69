// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-decompose-pads | FileCheck %s

// A constant pad becomes a fill of the padded tensor and a copy of the source into its interior (a
// loop that vectorizes, not the runtime's strided-copy helper).
func.func @pad(%x: tensor<?x5xf32>) -> tensor<?x9xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %r = tensor.pad %x low[1, 3] high[2, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<?x5xf32> to tensor<?x9xf32>
  return %r : tensor<?x9xf32>
}

// CHECK-LABEL: func.func @pad(
// CHECK-SAME:      %[[X:[^:]+]]: tensor<?x5xf32>)
// CHECK-NOT:     tensor.pad
// CHECK:         %[[E:.+]] = tensor.empty(%{{.+}}) : tensor<?x9xf32>
// CHECK:         %[[F:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E]] : tensor<?x9xf32>)
// CHECK:         %[[IN:.+]] = tensor.extract_slice %[[F]][1, 3] [%{{.+}}, 5] [1, 1]
// CHECK:         %[[C:.+]] = linalg.copy {{.*}}ins(%[[X]] : tensor<?x5xf32>) outs(%[[IN]] : tensor<?x5xf32>)
// CHECK:         %[[R:.+]] = tensor.insert_slice %[[C]] into %[[F]][1, 3] [%{{.+}}, 5] [1, 1]
// CHECK:         return %[[R]]
