// RUN: ftuner-opt %s --target=cuda:h200 --ftuner-select-ukernels --ftuner-bufferize --ftuner-tile | FileCheck %s

func.func @matmul(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %z = arith.constant 0.0 : f32
  %init = linalg.fill ins(%z : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%init : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// CHECK:       module attributes {gpu.container_module}
// CHECK-LABEL: func.func @matmul(
// CHECK-NOT:     linalg.matmul
// CHECK:         call @ftuner_gpu_matmul_128x128x8_8x8_edge32x32x8_2x2_dispatch(

// The body kernel: static 128x128 block, bk = 8, 256 threads; A and B tiles staged in shared memory
// between barriers; 8x8 fma accumulators per thread; no row/column guards on the write-back.
// CHECK-LABEL: gpu.module @ftuner_gpu_matmul_128x128x8_8x8_edge32x32x8_2x2
// CHECK:         gpu.func @body(
// CHECK-SAME:      workgroup(%[[AS:[^ ]+]] : memref<8x128xf32, #gpu.address_space<workgroup>>, %[[BS:[^ ]+]] : memref<8x128xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME:      kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c8{{.*}} iter_args(
// CHECK:             memref.store %{{.*}}, %[[AS]][
// CHECK:             memref.store %{{.*}}, %[[BS]][
// CHECK:             gpu.barrier
// CHECK:             memref.load %[[AS]]
// CHECK:             math.fma
// CHECK:             gpu.barrier
// CHECK-NOT:       arith.cmpi ult, %{{.*}}, %arg5
// CHECK:           gpu.return
// The edge kernel: 32x32 blocks, guarded.
// CHECK:         gpu.func @edge(
// CHECK-SAME:      memref<8x32xf32, #gpu.address_space<workgroup>>
// CHECK:           scf.if
// CHECK:           gpu.return

// Host dispatch: grids from the runtime dims; body over full tiles, edge kernels over the rest.
// CHECK-LABEL: func.func private @ftuner_gpu_matmul_128x128x8_8x8_edge32x32x8_2x2_dispatch(
// CHECK:         %[[M:[^ ]+]] = memref.dim %arg2, %c0{{[_0-9]*}}
// CHECK:         %[[N:[^ ]+]] = memref.dim %arg2, %c1{{[_0-9]*}}
// CHECK:         %[[GY:[^ ]+]] = arith.divui %[[M]], %c128{{[_0-9]*}}
// CHECK:         %[[GX:[^ ]+]] = arith.divui %[[N]], %c128{{[_0-9]*}}
// CHECK:         gpu.launch_func  @ftuner_gpu_matmul_128x128x8_8x8_edge32x32x8_2x2::@body blocks in (%[[GX]], %[[GY]], %c1{{[_0-9]*}}) threads in (%c256
// CHECK:         arith.ceildivui %[[N]], %c32
// CHECK:         gpu.launch_func  @ftuner_gpu_matmul_128x128x8_8x8_edge32x32x8_2x2::@edge
// CHECK:         gpu.launch_func  @ftuner_gpu_matmul_128x128x8_8x8_edge32x32x8_2x2::@edge
