// RUN: ftuner-opt %s --target=x86-avx512 --ftuner-decompose-aggregates --linalg-fuse-elementwise-ops --ftuner-fuse-row-chains | FileCheck %s

// Row ops on the same rows run as one loop over rows (lowering/loops/row_chains.py), their rows as vector
// code (lowering/loops/row_vectors.py): a softmax (max, exp, sum, divide) over [B, 4, T, S] scores; a layer
// norm's mean, variance and normalization whose mean is also returned (a loop result read after the
// group); small inputs keep the ops as they were, behind the scf.if.
func.func @softmax(%a: tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %b = tensor.dim %a, %c0 : tensor<?x4x?x?xf32>
  %t = tensor.dim %a, %c2 : tensor<?x4x?x?xf32>
  %s = tensor.dim %a, %c3 : tensor<?x4x?x?xf32>
  %e = tensor.empty(%b, %t, %s) : tensor<?x4x?x?xf32>
  %r = linalg.softmax dimension(3) ins(%a : tensor<?x4x?x?xf32>) outs(%e : tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  return %r : tensor<?x4x?x?xf32>
}

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @layer_norm(%x: tensor<?x?xf32>, %gamma: tensor<?xf32>) -> (tensor<?x?xf32>, tensor<?x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %k = tensor.dim %x, %c1 : tensor<?x?xf32>
  %kf = arith.index_cast %k : index to i64
  %count = arith.sitofp %kf : i64 to f32
  %zero = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e1 = tensor.empty(%n) : tensor<?x1xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<?x1xf32>) -> tensor<?x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x?xf32>) outs(%f1 : tensor<?x1xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.addf %v, %o : f32
    linalg.yield %r : f32
  } -> tensor<?x1xf32>
  %mean = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sum : tensor<?x1xf32>) outs(%e1 : tensor<?x1xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.divf %v, %count : f32
    linalg.yield %r : f32
  } -> tensor<?x1xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<?x1xf32>) -> tensor<?x1xf32>
  %var = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %mean : tensor<?x?xf32>, tensor<?x1xf32>) outs(%f2 : tensor<?x1xf32>) {
  ^bb0(%v: f32, %m: f32, %o: f32):
    %d = arith.subf %v, %m : f32
    %q = arith.mulf %d, %d : f32
    %r = arith.addf %q, %o : f32
    linalg.yield %r : f32
  } -> tensor<?x1xf32>
  %e2 = tensor.empty(%n, %k) : tensor<?x?xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean, %var, %gamma : tensor<?x?xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?xf32>) outs(%e2 : tensor<?x?xf32>) {
  ^bb0(%v: f32, %m: f32, %q: f32, %g: f32, %o: f32):
    %d = arith.subf %v, %m : f32
    %w = arith.divf %q, %count : f32
    %w2 = arith.addf %w, %eps : f32
    %is = math.rsqrt %w2 : f32
    %z = arith.mulf %d, %is : f32
    %r = arith.mulf %z, %g : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  return %y, %mean : tensor<?x?xf32>, tensor<?x1xf32>
}

// A masked softmax (BERT's attention): the mask is over fewer rows ([B, 1, T, S], made by a row op of
// its own that something else also reads); the scaled, masked scores join the softmax's loop, which
// reads each row's slice of the mask instead of a masked copy of the scores.
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bcast = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
#scalar = affine_map<(d0, d1, d2, d3) -> ()>
func.func @masked_softmax(%a: tensor<?x4x?x?xf32>, %keep: tensor<?x1x?x?xi8>) -> (tensor<?x4x?x?xf32>, tensor<?x1x?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %scale = arith.constant 0.125 : f32
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %b = tensor.dim %a, %c0 : tensor<?x4x?x?xf32>
  %t = tensor.dim %a, %c2 : tensor<?x4x?x?xf32>
  %s = tensor.dim %a, %c3 : tensor<?x4x?x?xf32>
  %zero = arith.constant 0 : i8
  %em = tensor.empty(%b, %t, %s) : tensor<?x1x?x?xi1>
  %drop = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%keep : tensor<?x1x?x?xi8>) outs(%em : tensor<?x1x?x?xi1>) {
  ^bb0(%k: i8, %o: i1):
    %r = arith.cmpi eq, %k, %zero : i8
    linalg.yield %r : i1
  } -> tensor<?x1x?x?xi1>
  %e = tensor.empty(%b, %t, %s) : tensor<?x4x?x?xf32>
  %scaled = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%a : tensor<?x4x?x?xf32>) outs(%e : tensor<?x4x?x?xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.mulf %v, %scale : f32
    linalg.yield %r : f32
  } -> tensor<?x4x?x?xf32>
  %masked = linalg.generic {indexing_maps = [#bcast, #scalar, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%drop, %ninf, %scaled : tensor<?x1x?x?xi1>, tensor<f32>, tensor<?x4x?x?xf32>) outs(%e : tensor<?x4x?x?xf32>) {
  ^bb0(%d: i1, %n: f32, %v: f32, %o: f32):
    %r = arith.select %d, %n, %v : f32
    linalg.yield %r : f32
  } -> tensor<?x4x?x?xf32>
  %r = linalg.softmax dimension(3) ins(%masked : tensor<?x4x?x?xf32>) outs(%e : tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %one = arith.constant 1.0 : f32
  %nought = arith.constant 0.0 : f32
  %ed = tensor.empty(%b, %t, %s) : tensor<?x1x?x?xf32>
  %dropped = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%drop : tensor<?x1x?x?xi1>) outs(%ed : tensor<?x1x?x?xf32>) {
  ^bb0(%d: i1, %o: f32):
    %v = arith.select %d, %one, %nought : f32
    linalg.yield %v : f32
  } -> tensor<?x1x?x?xf32>
  return %r, %dropped : tensor<?x4x?x?xf32>, tensor<?x1x?x?xf32>
}

// torch's decomposed softmax (exp of the scores minus their max, a sum, a division by the sum broadcast
// over the row): the division becomes one reciprocal per row and a vector multiplication.
#row2 = affine_map<(d0, d1) -> (d0, 0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @divided_softmax(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %k = tensor.dim %x, %c1 : tensor<?x?xf32>
  %e1 = tensor.empty(%n) : tensor<?x1xf32>
  %f1 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<?x1xf32>) -> tensor<?x1xf32>
  %max = linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x?xf32>) outs(%f1 : tensor<?x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.maximumf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<?x1xf32>
  %e = tensor.empty(%n, %k) : tensor<?x?xf32>
  %exp = linalg.generic {indexing_maps = [#id2, #row2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<?x?xf32>, tensor<?x1xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %v = math.exp %d : f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<?x1xf32>) -> tensor<?x1xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<?x?xf32>) outs(%f2 : tensor<?x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.addf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<?x1xf32>
  %p = linalg.generic {indexing_maps = [#id2, #row2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<?x?xf32>, tensor<?x1xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %v = arith.divf %a, %s : f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  return %p : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @softmax(
// CHECK:         %[[BIG:.+]] = arith.cmpi uge, %{{.*}}, %c32768{{.*}} : index
// CHECK:         scf.if %[[BIG]] -> (tensor<?x4x?x?xf32>) {
// CHECK:           %[[LOOP:.+]] = scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}}, %{{.*}}, %{{.*}}) shared_outs(%{{[^)]*}}) -> (tensor<?x4x?x?xf32>) {
// CHECK-NOT:         linalg.generic
// CHECK:             vector.reduction <maxnumf>
// CHECK-NOT:         linalg.generic
// CHECK:             scf.for
// CHECK:               arith.subf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK:               vector.transfer_write
// CHECK-NOT:         linalg.generic
// CHECK:             vector.reduction <add>
// CHECK-NOT:         linalg.generic
// CHECK:             arith.divf %{{.*}}, %{{.*}} : f32
// CHECK-NOT:         arith.divf
// CHECK:             arith.mulf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK-NOT:         linalg.generic
// CHECK:             scf.forall.in_parallel
// CHECK:           scf.yield %[[LOOP]] :
// CHECK:         } else {
// CHECK-COUNT-4:   linalg.generic {{.*}}ftuner.row_chain
// CHECK:           scf.yield
// CHECK-LABEL: func.func @layer_norm(
// CHECK:         scf.if %{{.*}} -> (tensor<?x1xf32>, tensor<?x?xf32>) {
// CHECK:           scf.forall (%{{.*}}) in (%{{.*}}) shared_outs(
// CHECK-NOT:         linalg.generic
// CHECK:             vector.reduction <add>
// CHECK-NOT:         linalg.generic
// The mean divides by the row length: one scalar reciprocal, a vector multiplication.
// CHECK:             arith.divf %{{.*}}, %{{.*}} : f32
// CHECK-NOT:         arith.divf %{{.*}} : vector
// CHECK:             arith.mulf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK-NOT:         linalg.generic
// CHECK:             vector.reduction <add>
// CHECK-NOT:         linalg.generic
// CHECK:             math.rsqrt %{{.*}} : f32
// CHECK:             vector.transfer_write
// CHECK:             scf.forall.in_parallel
// CHECK:         } else {
// The serial ops reuse buffers as the loop does: the mean is written over the sum it reads.
// CHECK:           %[[SUM:.+]] = linalg.generic {{.*}}ftuner.row_chain
// CHECK:           linalg.generic {{.*}} ins(%[[SUM]] : tensor<?x1xf32>) outs(%[[SUM]] : tensor<?x1xf32>) {{.*}}ftuner.row_chain
// CHECK-COUNT-2:   linalg.generic {{.*}}ftuner.row_chain
// CHECK-NOT:     linalg.generic
// CHECK:         return
// CHECK-LABEL: func.func @masked_softmax(
// CHECK:         %[[DROP:.+]] = linalg.generic {{.*}} ins(%arg1 : tensor<?x1x?x?xi8>)
// CHECK:         scf.if %{{.*}} -> (tensor<?x4x?x?xf32>) {
// CHECK:           scf.forall (%[[B:.+]], %{{.*}}, %[[T:.+]]) in
// CHECK:             %[[ROW:.+]] = tensor.extract_slice %[[DROP]][%[[B]], 0, %[[T]], 0] [1, 1, 1, %{{.*}}] {{.*}} to tensor<1x1x1x?xi1>
// CHECK:             %[[M:.+]] = vector.transfer_read %[[ROW]]{{.*}} : tensor<1x1x1x?xi1>, vector<16xi1>
// CHECK:             arith.mulf {{.*}} : vector<16xf32>
// CHECK:             arith.select %[[M]], {{.*}} : vector<16xi1>, vector<16xf32>
// CHECK:             vector.reduction <maxnumf>
// CHECK:             vector.reduction <add>
// CHECK:             scf.forall.in_parallel
// CHECK:         } else {
// CHECK-COUNT-5:   linalg.generic {{.*}}ftuner.row_chain
// CHECK:           scf.yield
// CHECK-LABEL: func.func @divided_softmax(
// CHECK:           scf.forall
// CHECK:             vector.reduction <maximumf>
// CHECK:             vector.reduction <add>
// CHECK:             %[[R:.+]] = arith.divf %{{.*}}, %{{.*}} : f32
// CHECK:             scf.for
// CHECK:               %[[RV:.+]] = vector.broadcast %[[R]] : f32 to vector<16xf32>
// CHECK:               arith.mulf %{{.*}}, %[[RV]] : vector<16xf32>
// CHECK-NOT:         arith.divf {{.*}} : vector<16xf32>
// CHECK:             scf.forall.in_parallel
