// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-reshapes-as-views | FileCheck %s

// A tensor.reshape whose dims prove it splits or merges neighbouring dims becomes an expand_shape or a
// collapse_shape (a view of a strided slice, not a copy): GPT-2's heads split of a column slice of the
// fused QKV result, the heads merged back, rows split into (batch, T), also with both dynamic (one
// dynamic dim against a run of them: sizes from the shape operand), and merged back. Two dynamic
// groups, or static sizes that do not line up, keep the reshape.
func.func @heads_of_a_slice(%qkv: tensor<16x?x2304xf32>) -> tensor<16x?x12x64xf32> {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : i64
  %c12 = arith.constant 12 : i64
  %c64 = arith.constant 64 : i64
  %t = tensor.dim %qkv, %c1 : tensor<16x?x2304xf32>
  %k = tensor.extract_slice %qkv[0, 0, 768] [16, %t, 768] [1, 1, 1] : tensor<16x?x2304xf32> to tensor<16x?x768xf32>
  %ti = arith.index_cast %t : index to i64
  %shape = tensor.from_elements %c16, %ti, %c12, %c64 : tensor<4xi64>
  %r = tensor.reshape %k(%shape) : (tensor<16x?x768xf32>, tensor<4xi64>) -> tensor<16x?x12x64xf32>
  return %r : tensor<16x?x12x64xf32>
}

func.func @merge_heads(%x: tensor<16x?x12x64xf32>) -> tensor<16x?x768xf32> {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : i64
  %c768 = arith.constant 768 : i64
  %t = tensor.dim %x, %c1 : tensor<16x?x12x64xf32>
  %ti = arith.index_cast %t : index to i64
  %shape = tensor.from_elements %c16, %ti, %c768 : tensor<3xi64>
  %r = tensor.reshape %x(%shape) : (tensor<16x?x12x64xf32>, tensor<3xi64>) -> tensor<16x?x768xf32>
  return %r : tensor<16x?x768xf32>
}

func.func @split_rows(%x: tensor<?x48xf32>) -> tensor<4x?x48xf32> {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c4i = arith.constant 4 : i64
  %c48 = arith.constant 48 : i64
  %m = tensor.dim %x, %c0 : tensor<?x48xf32>
  %t = arith.divsi %m, %c4 : index
  %ti = arith.index_cast %t : index to i64
  %shape = tensor.from_elements %c4i, %ti, %c48 : tensor<3xi64>
  %r = tensor.reshape %x(%shape) : (tensor<?x48xf32>, tensor<3xi64>) -> tensor<4x?x48xf32>
  return %r : tensor<4x?x48xf32>
}

func.func @split_batch_and_length(%x: tensor<?x48xf32>, %ids: tensor<?x?xi64>) -> tensor<?x?x48xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c48 = arith.constant 48 : i64
  %bd = tensor.dim %ids, %c0 : tensor<?x?xi64>
  %td = tensor.dim %ids, %c1 : tensor<?x?xi64>
  %b = arith.index_cast %bd : index to i64
  %t = arith.index_cast %td : index to i64
  %shape = tensor.from_elements %b, %t, %c48 : tensor<3xi64>
  %r = tensor.reshape %x(%shape) : (tensor<?x48xf32>, tensor<3xi64>) -> tensor<?x?x48xf32>
  return %r : tensor<?x?x48xf32>
}

func.func @merge_batch_and_length(%x: tensor<?x?x3x16xf32>) -> tensor<?x48xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c48 = arith.constant 48 : i64
  %b = tensor.dim %x, %c0 : tensor<?x?x3x16xf32>
  %t = tensor.dim %x, %c1 : tensor<?x?x3x16xf32>
  %bt = arith.muli %b, %t : index
  %rows = arith.index_cast %bt : index to i64
  %shape = tensor.from_elements %rows, %c48 : tensor<2xi64>
  %r = tensor.reshape %x(%shape) : (tensor<?x?x3x16xf32>, tensor<2xi64>) -> tensor<?x48xf32>
  return %r : tensor<?x48xf32>
}

func.func @two_dynamic_groups(%s: tensor<6x?x?xf32>) -> tensor<2x3x?x?xf32> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c2i = arith.constant 2 : i64
  %c3i = arith.constant 3 : i64
  %a = tensor.dim %s, %c1 : tensor<6x?x?xf32>
  %b = tensor.dim %s, %c2 : tensor<6x?x?xf32>
  %ai = arith.index_cast %a : index to i64
  %bi = arith.index_cast %b : index to i64
  %shape = tensor.from_elements %c2i, %c3i, %ai, %bi : tensor<4xi64>
  %r = tensor.reshape %s(%shape) : (tensor<6x?x?xf32>, tensor<4xi64>) -> tensor<2x3x?x?xf32>
  return %r : tensor<2x3x?x?xf32>
}

func.func @not_neighbours(%s: tensor<?x6xf32>) -> tensor<?x4x?xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3i = arith.constant 3 : i64
  %c4i = arith.constant 4 : i64
  %m = tensor.dim %s, %c0 : tensor<?x6xf32>
  %half = arith.divsi %m, %c2 : index
  %hi = arith.index_cast %half : index to i64
  %shape = tensor.from_elements %hi, %c4i, %c3i : tensor<3xi64>
  %r = tensor.reshape %s(%shape) : (tensor<?x6xf32>, tensor<3xi64>) -> tensor<?x4x?xf32>
  return %r : tensor<?x4x?xf32>
}

// CHECK-LABEL: func.func @heads_of_a_slice(
// CHECK:         %[[T:.+]] = tensor.dim %{{.*}}, %{{.*}} : tensor<16x?x2304xf32>
// CHECK:         %[[K:.+]] = tensor.extract_slice %{{.*}}[0, 0, 768] [16, %[[T]], 768] [1, 1, 1]
// CHECK-NOT:     tensor.reshape
// CHECK:         tensor.expand_shape %[[K]] {{\[}}[0], [1], [2, 3]] output_shape [16, %{{.*}}, 12, 64] : tensor<16x?x768xf32> into tensor<16x?x12x64xf32>
// CHECK-NOT:     tensor.reshape
// CHECK:         return
// CHECK-LABEL: func.func @merge_heads(
// CHECK-NOT:     tensor.reshape
// CHECK:         tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : tensor<16x?x12x64xf32> into tensor<16x?x768xf32>
// CHECK-NOT:     tensor.reshape
// CHECK:         return
// CHECK-LABEL: func.func @split_rows(
// CHECK-NOT:     tensor.reshape
// CHECK:         %[[ROWS:.+]] = arith.divui %{{.*}}, %{{.*}} : index
// CHECK:         tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [4, %[[ROWS]], 48] : tensor<?x48xf32> into tensor<4x?x48xf32>
// CHECK-NOT:     tensor.reshape
// CHECK:         return
// CHECK-LABEL: func.func @split_batch_and_length(
// CHECK-NOT:     tensor.reshape
// CHECK:         %[[B:.+]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:         %[[T:.+]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:         tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [%[[B]], %[[T]], 48] : tensor<?x48xf32> into tensor<?x?x48xf32>
// CHECK-NOT:     tensor.reshape
// CHECK:         return
// CHECK-LABEL: func.func @merge_batch_and_length(
// CHECK-NOT:     tensor.reshape
// CHECK:         tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2, 3]] : tensor<?x?x3x16xf32> into tensor<?x48xf32>
// CHECK-NOT:     tensor.reshape
// CHECK:         return
// CHECK-LABEL: func.func @two_dynamic_groups(
// CHECK:         tensor.reshape
// CHECK-LABEL: func.func @not_neighbours(
// CHECK:         tensor.reshape
