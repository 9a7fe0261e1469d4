// RUN: nerve-opt %s --convert-tdim-to-scf --canonicalize --cse --split-input-file | FileCheck %s

// A map is one scf.parallel over the outputs' dimensions, ordered as the
// first output is laid out (innermost contiguous). A broadcast input is
// loaded without the dimension it lacks; f16 storage is extended to the
// region's f32 and rounded back on store.
// CHECK-LABEL: func.func @map
// CHECK: scf.parallel (%[[R:.*]], %[[C:.*]]) = (%c0, %c0) to (%{{.*}}, %{{.*}}) step (%c1, %c1) {
// CHECK:   %[[X:.*]] = memref.load %{{.*}}[%[[R]], %[[C]]] : memref<?x?xf16>
// CHECK:   %[[XE:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK:   %[[B:.*]] = memref.load %{{.*}}[%[[C]]] : memref<?xf32>
// CHECK:   %[[S:.*]] = arith.addf %[[XE]], %[[B]] : f32
// CHECK:   %[[T:.*]] = arith.truncf %[[S]] : f32 to f16
// CHECK:   memref.store %[[T]], %{{.*}}[%[[R]], %[[C]]] : memref<?x?xf16>
tdim.kernel @map(%x: !tdim.tensor<[r: ?, c: ?], f16>, %b: !tdim.tensor<[c: ?], f32>) -> (%y: !tdim.tensor<[r: ?, c: ?], f16>) {
  tdim.map ins(%x, %b : !tdim.tensor<[r: ?, c: ?], f16>, !tdim.tensor<[c: ?], f32>) outs(%y : !tdim.tensor<[r: ?, c: ?], f16>) {
  ^bb0(%v: f32, %w: f32):
    %s = arith.addf %v, %w : f32
    tdim.yield %s : f32
  }
  tdim.return
}

// -----

// A reduce: scf.parallel over the kept dimensions around loops over the
// reduced ones carrying the accumulators from their identities; the map
// region sees the position along the reduced dimension; the post region the
// count. A combine of more than one op makes the loop a fold.for whose merge
// region is the combine (two partial tuples in, the merged one out), so
// that a mapping may split the fold.
// CHECK-LABEL: func.func @reduce
// CHECK: scf.parallel (%[[R:.*]]) = (%c0) to (%{{.*}}) step (%c1) {
// CHECK:   %[[RES:.*]]:2 = fold.for %[[C:.*]] = %c0 to %[[NC:.*]] step %c1 iter_args(%[[BEST:.*]] = %cst, %[[AT:.*]] = %c-1_i32) -> (f32, i32) {
// CHECK:     %[[V:.*]] = memref.load %{{.*}}[%[[R]], %[[C]]]
// CHECK:     %[[I:.*]] = arith.index_cast %[[C]] : index to i32
// CHECK:     arith.cmpf ogt, %[[V]], %[[BEST]]
// CHECK:     fold.yield
// CHECK:   } merge {
// CHECK:   ^bb0(%[[B:.*]]: f32, %[[A:.*]]: i32, %[[V2:.*]]: f32, %[[K:.*]]: i32):
// CHECK:     %[[GT:.*]] = arith.cmpf ogt, %[[V2]], %[[B]] : f32
// CHECK:     %[[NB:.*]] = arith.select %[[GT]], %[[V2]], %[[B]] : f32
// CHECK:     %[[NA:.*]] = arith.select %[[GT]], %[[K]], %[[A]] : i32
// CHECK:     fold.yield %[[NB]], %[[NA]] : f32, i32
// CHECK:   }
// CHECK:   arith.index_cast %[[NC]]
// CHECK:   memref.store %{{.*}}, %{{.*}}[%[[R]]] : memref<?xi32>
tdim.kernel @reduce(%x: !tdim.tensor<[r: ?, c: ?], f32>) -> (%i: !tdim.tensor<[r: ?], i32>) {
  tdim.reduce ins(%x : !tdim.tensor<[r: ?, c: ?], f32>) outs(%i : !tdim.tensor<[r: ?], i32>) over [c]
      init [0xFF800000 : f32, -1 : i32]
    map {
    ^bb0(%v: f32, %c: index):
      %ci = arith.index_cast %c : index to i32
      tdim.yield %v, %ci : f32, i32
    }
    combine {
    ^bb0(%b: f32, %a: i32, %v: f32, %k: i32):
      %gt = arith.cmpf ogt, %v, %b : f32
      %nb = arith.select %gt, %v, %b : f32
      %na = arith.select %gt, %k, %a : i32
      tdim.yield %nb, %na : f32, i32
    }
    post {
    ^bb0(%b: f32, %a: i32, %n: index):
      %ni = arith.index_cast %n : index to i32
      %r = arith.addi %a, %ni : i32
      tdim.yield %r : i32
    }
  tdim.return
}

// -----

// A merge region may use constants from outside it; a combine of one op
// (a sum) needs no merge region (its scf.for's step is it); a combine that
// uses another value from outside gets none (its fold is not split).
// CHECK-LABEL: func.func @combines
// CHECK: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: fold.for {{.*}} -> (f32, f32) {
// CHECK: } merge {
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32, %[[D:.*]]: f32):
// CHECK:   %[[S:.*]] = arith.addf %[[A]], %[[C]] : f32
// CHECK:   %[[T:.*]] = arith.mulf %[[B]], %[[HALF]] : f32
// CHECK:   fold.yield %[[S]], %[[T]] : f32, f32
// CHECK: scf.for {{.*}} -> (f32) {
// CHECK-NOT: merge
// CHECK: scf.for {{.*}} -> (f32, f32) {
// CHECK-NOT: merge
// CHECK: return
// CHECK-NOT: func.func
tdim.kernel @combines(%x: !tdim.tensor<[r: ?, c: ?], f32>, %k: !tdim.tensor<[], f32>) -> (%s: !tdim.tensor<[r: ?], f32>, %t: !tdim.tensor<[r: ?], f32>, %u: !tdim.tensor<[r: ?], f32>, %v: !tdim.tensor<[r: ?], f32>, %w: !tdim.tensor<[r: ?], f32>) {
  %half = arith.constant 0.5 : f32
  tdim.reduce ins(%x, %x : !tdim.tensor<[r: ?, c: ?], f32>, !tdim.tensor<[r: ?, c: ?], f32>) outs(%s, %t : !tdim.tensor<[r: ?], f32>, !tdim.tensor<[r: ?], f32>) over [c]
      init [0.0 : f32, 1.0 : f32]
    combine {
    ^bb0(%a: f32, %b: f32, %c: f32, %d: f32):
      %sum = arith.addf %a, %c : f32
      %prod = arith.mulf %b, %half : f32
      tdim.yield %sum, %prod : f32, f32
    }
  tdim.reduce ins(%x : !tdim.tensor<[r: ?, c: ?], f32>) outs(%u : !tdim.tensor<[r: ?], f32>) over [c]
      init [0.0 : f32]
    combine {
    ^bb0(%a: f32, %b: f32):
      %sum = arith.addf %a, %b : f32
      tdim.yield %sum : f32
    }
  %kv = tdim.load %k[] : !tdim.tensor<[], f32>
  tdim.reduce ins(%x, %x : !tdim.tensor<[r: ?, c: ?], f32>, !tdim.tensor<[r: ?, c: ?], f32>) outs(%v, %w : !tdim.tensor<[r: ?], f32>, !tdim.tensor<[r: ?], f32>) over [c]
      init [0.0 : f32, 0.0 : f32]
    combine {
    ^bb0(%a: f32, %b: f32, %c: f32, %d: f32):
      %sum = arith.addf %a, %c : f32
      %scaled = arith.mulf %d, %kv : f32
      %prod = arith.addf %b, %scaled : f32
      tdim.yield %sum, %prod : f32, f32
    }
  tdim.return
}


// -----

// A reduce stating max_sum_exp (an online softmax's statistics, as
// tdim-decompose builds them) makes its fold.for state it too; one that
// does not state it does not.
// CHECK-LABEL: func.func @max_sum_exp
// CHECK: fold.for {{.*}} -> (f32, f32) {
// CHECK: } merge max_sum_exp {
// CHECK: fold.for {{.*}} -> (f32, f32) {
// CHECK-NOT: max_sum_exp
// CHECK: return
!mx = !tdim.tensor<[r: ?, c: ?], f32>
!cv = !tdim.tensor<[c: ?], f32>
tdim.kernel @max_sum_exp(%x: !mx) -> (%mo: !cv, %so: !cv, %no: !cv, %to: !cv) {
  tdim.reduce ins(%x : !mx) outs(%mo, %so : !cv, !cv) over [r]
      init [0xFF800000 : f32, 0.0 : f32] max_sum_exp
    map {
    ^bb0(%v: f32):
      %one = arith.constant 1.0 : f32
      tdim.yield %v, %one : f32, f32
    }
    combine {
    ^bb0(%m1: f32, %s1: f32, %m2: f32, %s2: f32):
      %one = arith.constant 1.0 : f32
      %m = arith.maximumf %m1, %m2 : f32
      %lo = arith.minimumf %m1, %m2 : f32
      %same = arith.cmpf oeq, %m1, %m2 : f32
      %d = arith.subf %lo, %m : f32
      %e = math.exp %d : f32
      %scale = arith.select %same, %one, %e : f32
      %first = arith.cmpf oge, %m1, %m2 : f32
      %larger = arith.select %first, %s1, %s2 : f32
      %smaller = arith.select %first, %s2, %s1 : f32
      %scaled = arith.mulf %smaller, %scale : f32
      %s = arith.addf %scaled, %larger : f32
      tdim.yield %m, %s : f32, f32
    }
  tdim.reduce ins(%x : !mx) outs(%no, %to : !cv, !cv) over [r]
      init [0xFF800000 : f32, 0.0 : f32]
    map {
    ^bb0(%v: f32):
      %one = arith.constant 1.0 : f32
      tdim.yield %v, %one : f32, f32
    }
    combine {
    ^bb0(%m1: f32, %s1: f32, %m2: f32, %s2: f32):
      %one = arith.constant 1.0 : f32
      %m = arith.maximumf %m1, %m2 : f32
      %lo = arith.minimumf %m1, %m2 : f32
      %same = arith.cmpf oeq, %m1, %m2 : f32
      %d = arith.subf %lo, %m : f32
      %e = math.exp %d : f32
      %scale = arith.select %same, %one, %e : f32
      %first = arith.cmpf oge, %m1, %m2 : f32
      %larger = arith.select %first, %s1, %s2 : f32
      %smaller = arith.select %first, %s2, %s1 : f32
      %scaled = arith.mulf %smaller, %scale : f32
      %s = arith.addf %scaled, %larger : f32
      tdim.yield %m, %s : f32, f32
    }
  tdim.return
}
// -----

// A contraction accumulates products in f32 over the dimension the output
// lacks; with `accumulate` it starts from the output's value.
// CHECK-LABEL: func.func @contract
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%c0, %c0) to (%{{.*}}, %{{.*}}) step (%c1, %c1) {
// CHECK:   %[[C0:.*]] = memref.load %{{.*}}[%[[I]], %[[J]]] : memref<?x?xf16>
// CHECK:   %[[INIT:.*]] = arith.extf %[[C0]] : f16 to f32
// CHECK:   %[[SUM:.*]] = scf.for %[[K:.*]] = %c0 to %{{.*}} step %c1 iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32) {
// CHECK:     %[[A:.*]] = memref.load %{{.*}}[%[[I]], %[[K]]] : memref<?x?xf16>
// CHECK:     %[[B:.*]] = memref.load %{{.*}}[%[[J]], %[[K]]] : memref<?x?xf16>
// CHECK:     %[[P:.*]] = arith.mulf
// CHECK:     arith.addf %[[ACC]], %[[P]] : f32
// CHECK:   arith.truncf %[[SUM]] : f32 to f16
tdim.kernel @contract(%a: !tdim.tensor<[i: ?, k: ?], f16>, %b: !tdim.tensor<[j: ?, k: ?], f16>) -> (%c: !tdim.tensor<[i: ?, j: ?], f16>) {
  tdim.contract ins(%a, %b : !tdim.tensor<[i: ?, k: ?], f16>, !tdim.tensor<[j: ?, k: ?], f16>) outs(%c : !tdim.tensor<[i: ?, j: ?], f16>) accumulate
  tdim.return
}

// -----

// A reduction to one value with one accumulator is a parallel loop whose
// combine is an scf.reduce (init is the identity); post and store follow.
// CHECK-LABEL: func.func @total
// CHECK:       %[[R:.*]] = scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}) step (%{{.*}}, %{{.*}}) init (%{{.*}}) -> f32 {
// CHECK:         %[[V:.*]] = memref.load
// CHECK:         %[[SQ:.*]] = arith.mulf %[[V]], %[[V]] : f32
// CHECK:         scf.reduce(%[[SQ]] : f32) {
// CHECK:         ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK:           %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK:           scf.reduce.return %[[S]] : f32
// CHECK:       memref.store %[[R]], %{{.*}}[] : memref<f32>
tdim.kernel @total(%x: !tdim.tensor<[r: ?, c: ?], f32>) -> (%s: !tdim.tensor<[], f32>) {
  tdim.reduce ins(%x : !tdim.tensor<[r: ?, c: ?], f32>) outs(%s : !tdim.tensor<[], f32>) over [r, c] init [0.0 : f32]
    map {
    ^bb0(%v: f32):
      %sq = arith.mulf %v, %v : f32
      tdim.yield %sq : f32
    }
    combine {
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      tdim.yield %t : f32
    }
  tdim.return
}

// -----

// Within a signature a dimension name has one size (the runtime checks it),
// so every extent of `r` and `c` is read from the first argument that has
// it: the max and the elementwise pass of a softmax then loop over the same
// bounds, which lets the GPU mapping fuse them (row programs).
// CHECK-LABEL: func.func @softmax
// CHECK-SAME:  (%[[X:.*]]: memref<?x?xf32>, %[[Y:.*]]: memref<?x?xf32>)
// CHECK-NOT:   memref.dim %[[Y]]
// CHECK:       %[[R:.*]] = memref.dim %[[X]], %c0
// CHECK:       scf.parallel (%{{.*}}) = (%c0) to (%[[R]])
// CHECK:       scf.parallel (%{{.*}}) = (%c0) to (%[[R]])
// CHECK:       scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%[[R]], %{{.*}})
// CHECK-NOT:   memref.dim %[[Y]]
tdim.kernel @softmax(%x: !tdim.tensor<[r: ?, c: ?], f32>) -> (%y: !tdim.tensor<[r: ?, c: ?], f32>) {
  tdim.softmax ins(%x : !tdim.tensor<[r: ?, c: ?], f32>) outs(%y : !tdim.tensor<[r: ?, c: ?], f32>) over c
  tdim.return
}

// -----

// A contraction with a tensor-core tiling keeps its structure: which
// dimension of each operand is contracted, which of the output's is lhs's.
// CHECK-LABEL: func.func @tiled_contract
// CHECK-SAME: (%[[A:.*]]: memref<?x?xf16>, %[[B:.*]]: memref<?x?xf16>, %[[C:.*]]: memref<?x?xf16>)
// CHECK-NOT: scf.parallel
// CHECK: gpumap.tiled_contract ins(%[[A]], %[[B]] : memref<?x?xf16>, memref<?x?xf16>) outs(%[[C]] : memref<?x?xf16>) lhs_k = 0 rhs_k = 0 output_m = 1 tiling <instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4> accumulate
tdim.kernel @tiled_contract(%a: !tdim.tensor<[k: ?, i: ?], f16>, %b: !tdim.tensor<[k: ?, j: ?], f16>) -> (%c: !tdim.tensor<[j: ?, i: ?], f16>) {
  tdim.contract ins(%a, %b : !tdim.tensor<[k: ?, i: ?], f16>, !tdim.tensor<[k: ?, j: ?], f16>) outs(%c : !tdim.tensor<[j: ?, i: ?], f16>) accumulate {gpumap.contract_tiling = #gpumap.contract_tiling<instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4>}
  tdim.return
}

// -----

// Row dimensions that are one in memory are collapsed into one.
// CHECK-LABEL: func.func @tiled_rows
// CHECK-SAME: (%[[X:.*]]: memref<4x8x?xf16>, %[[W:.*]]: memref<?x?xf16>, %[[Y:.*]]: memref<4x8x?xf16>)
// CHECK-DAG: %[[XC:.*]] = memref.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : memref<4x8x?xf16> into memref<32x?xf16>
// CHECK-DAG: %[[YC:.*]] = memref.collapse_shape %[[Y]] {{\[\[}}0, 1], [2]] : memref<4x8x?xf16> into memref<32x?xf16>
// CHECK: gpumap.tiled_contract ins(%[[XC]], %[[W]] : memref<32x?xf16>, memref<?x?xf16>) outs(%[[YC]] : memref<32x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0
tdim.kernel @tiled_rows(%x: !tdim.tensor<[t: 4, b: 8, k: ?], f16>, %w: !tdim.tensor<[j: ?, k: ?], f16>) -> (%y: !tdim.tensor<[t: 4, b: 8, j: ?], f16>) {
  tdim.contract ins(%x, %w : !tdim.tensor<[t: 4, b: 8, k: ?], f16>, !tdim.tensor<[j: ?, k: ?], f16>) outs(%y : !tdim.tensor<[t: 4, b: 8, j: ?], f16>) {gpumap.contract_tiling = #gpumap.contract_tiling<instruction = wgmma, tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4>}
  tdim.return
}

// -----

// A contraction's epilogue in the general loops: the sum, then the `with`
// inputs loaded at the output point (the bias without the dimension it
// lacks, widened as the region takes it), then the region, then the store.
// CHECK-LABEL: func.func @contract_epilogue
// CHECK-SAME: (%[[X:.*]]: memref<?x?xf32>, %[[W:.*]]: memref<?x?xf32>, %[[B:.*]]: memref<?xf16>, %[[Y:.*]]: memref<?x?xf32>)
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) =
// CHECK: %[[SUM:.*]] = scf.for
// CHECK: %[[BV:.*]] = memref.load %[[B]][%[[J]]] : memref<?xf16>
// CHECK: %[[BW:.*]] = arith.extf %[[BV]] : f16 to f32
// CHECK: %[[R:.*]] = arith.addf %[[SUM]], %[[BW]] : f32
// CHECK: memref.store %[[R]], %[[Y]][%[[I]], %[[J]]]
tdim.kernel @contract_epilogue(%x: !tdim.tensor<[i: ?, k: ?], f32>, %w: !tdim.tensor<[j: ?, k: ?], f32>, %bias: !tdim.tensor<[j: ?], f16>) -> (%y: !tdim.tensor<[i: ?, j: ?], f32>) {
  tdim.contract ins(%x, %w : !tdim.tensor<[i: ?, k: ?], f32>, !tdim.tensor<[j: ?, k: ?], f32>) with(%bias : !tdim.tensor<[j: ?], f16>) outs(%y : !tdim.tensor<[i: ?, j: ?], f32>) epilogue {
  ^bb0(%s: f32, %c: f32):
    %r = arith.addf %s, %c : f32
    tdim.yield %r : f32
  }
  tdim.return
}

// -----

// A tiled contraction's `with` inputs are views indexed as its output is,
// rows merged: a bias over j has stride 0 along the merged rows, a
// residual over [t, b, j] its b stride; the epilogue takes the inputs'
// element types and widens them where the region computed wider.
// CHECK-LABEL: func.func @tiled_epilogue
// CHECK-SAME: (%[[X:.*]]: memref<?x?x?xf16>, %[[W:.*]]: memref<?x?xf16>, %[[B:.*]]: memref<?xf16>, %[[R:.*]]: memref<?x?x?xf16>, %[[Y:.*]]: memref<?x?x?xf16>)
// CHECK-DAG: %[[YC:.*]] = memref.collapse_shape %[[Y]] {{\[\[}}0, 1], [2]]
// CHECK-DAG: %[[M:.*]] = memref.dim %[[YC]], %c0
// CHECK-DAG: %[[N:.*]] = memref.dim %[[YC]], %c1
// CHECK-DAG: %[[BV:.*]] = memref.reinterpret_cast %[[B]] to offset: [0], sizes: [%[[M]], %[[N]]], strides: [0, 1]
// CHECK-DAG: %[[BC:.*]] = memref.cast %[[BV]]
// CHECK-DAG: %{{.*}}, %{{.*}}, %{{.*}}:3, %[[RSTRIDES:.*]]:3 = memref.extract_strided_metadata %[[R]]
// CHECK-DAG: %[[RV:.*]] = memref.reinterpret_cast %[[R]] to offset: [0], sizes: [%[[M]], %[[N]]], strides: [%[[RSTRIDES]]#1, 1]
// CHECK-DAG: %[[RC:.*]] = memref.cast %[[RV]]
// CHECK: gpumap.tiled_contract ins(%{{.*}}, %[[W]] : {{.*}}) with(%[[BC]], %[[RC]] : memref<?x?xf16, strided<[?, ?], offset: ?>>, memref<?x?xf16, strided<[?, ?], offset: ?>>) outs(%[[YC]] : {{.*}}) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <{{.*}}> epilogue {
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %[[BE:.*]]: f16, %[[RE:.*]]: f16):
// CHECK-DAG: %[[BW:.*]] = arith.extf %[[BE]] : f16 to f32
// CHECK-DAG: %[[RW:.*]] = arith.extf %[[RE]] : f16 to f32
// CHECK: %[[P:.*]] = arith.addf %[[S]], %[[BW]] : f32
// CHECK: %[[Q:.*]] = arith.addf %[[P]], %[[RW]] : f32
// CHECK: gpumap.yield %[[Q]] : f32
!x = !tdim.tensor<[t: ?, b: ?, k: ?], f16>
!y = !tdim.tensor<[t: ?, b: ?, j: ?], f16>
tdim.kernel @tiled_epilogue(%x: !x, %w: !tdim.tensor<[j: ?, k: ?], f16>, %bias: !tdim.tensor<[j: ?], f16>, %res: !y) -> (%y: !y) {
  tdim.contract ins(%x, %w : !x, !tdim.tensor<[j: ?, k: ?], f16>) with(%bias, %res : !tdim.tensor<[j: ?], f16>, !y) outs(%y : !y) {gpumap.contract_tiling = #gpumap.contract_tiling<instruction = wgmma, tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4>} epilogue {
  ^bb0(%s: f32, %c: f32, %r: f32):
    %p = arith.addf %s, %c : f32
    %q = arith.addf %p, %r : f32
    tdim.yield %q : f32
  }
  tdim.return
}

// -----

// A scan in the general loops runs as the unfused ops would: every sum
// into an f32 scratch buffer, then every other output point in parallel,
// the scanned dimension an scf.for carrying the states (from `carry`), the
// epilogue on each step's sum, its first value stored and the rest
// carried.
// CHECK-LABEL: func.func @scan_loops
// CHECK-SAME: (%[[X:.*]]: memref<?x?x?xf32>, %[[W:.*]]: memref<?x?xf32>, %[[S:.*]]: memref<?x?x?xf32>)
// CHECK: %[[SUMS:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?xf32>
// CHECK: scf.parallel (%[[T0:.*]], %[[B0:.*]], %[[J0:.*]]) =
// CHECK: %[[SUM:.*]] = scf.for
// CHECK: memref.store %[[SUM]], %[[SUMS]][%[[T0]], %[[B0]], %[[J0]]]
// CHECK: scf.parallel (%[[B:.*]], %[[J:.*]]) =
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[V:.*]] = %{{.*}}) -> (f32)
// CHECK: %[[X1:.*]] = memref.load %[[SUMS]][%[[T]], %[[B]], %[[J]]]
// CHECK: %[[H:.*]] = arith.addf %[[V]], %[[X1]] : f32
// CHECK: memref.store %[[H]], %[[S]][%[[T]], %[[B]], %[[J]]]
// CHECK: scf.yield %[[H]] : f32
// CHECK: memref.dealloc %[[SUMS]]
tdim.kernel @scan_loops(%x: !tdim.tensor<[t: ?, b: ?, k: ?], f32>, %w: !tdim.tensor<[j: ?, k: ?], f32>) -> (%s: !tdim.tensor<[t: ?, b: ?, j: ?], f32>) {
  tdim.contract ins(%x, %w : !tdim.tensor<[t: ?, b: ?, k: ?], f32>, !tdim.tensor<[j: ?, k: ?], f32>) outs(%s : !tdim.tensor<[t: ?, b: ?, j: ?], f32>) scan t carry [0.0 : f32] epilogue {
  ^bb0(%sum: f32, %v: f32):
    %h = arith.addf %v, %sum : f32
    tdim.yield %h, %h : f32, f32
  }
  tdim.return
}

// -----

// A tiled scan keeps time apart: lhs and the output stay [t, rows, ...]
// (the other row dimensions merged after it), the carried states' start
// as f32, the epilogue with its states.
// CHECK-LABEL: func.func @scan_tiled
// CHECK-SAME: (%[[X:.*]]: memref<?x?x?x?xf16>, %[[W:.*]]: memref<?x?xf16>, %[[S:.*]]: memref<?x?x?x?xf16>)
// CHECK-DAG: %[[XC:.*]] = memref.collapse_shape %[[X]] {{\[\[}}0], [1, 2], [3]] : memref<?x?x?x?xf16> into memref<?x?x?xf16>
// CHECK-DAG: %[[SC:.*]] = memref.collapse_shape %[[S]] {{\[\[}}0], [1, 2], [3]] : memref<?x?x?x?xf16> into memref<?x?x?xf16>
// CHECK: gpumap.tiled_contract ins(%[[XC]], %[[W]] : memref<?x?x?xf16>, memref<?x?xf16>) outs(%[[SC]] : memref<?x?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <{{.*}}> scan carry [5.000000e-01 : f32] epilogue {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32):
// CHECK: gpumap.yield %{{.*}}, %{{.*}} : f32, f32
!x4 = !tdim.tensor<[t: ?, a: ?, b: ?, k: ?], f16>
!s4 = !tdim.tensor<[t: ?, a: ?, b: ?, j: ?], f16>
tdim.kernel @scan_tiled(%x: !x4, %w: !tdim.tensor<[j: ?, k: ?], f16>) -> (%s: !s4) {
  tdim.contract ins(%x, %w : !x4, !tdim.tensor<[j: ?, k: ?], f16>) outs(%s : !s4) scan t carry [0.5 : f32] {gpumap.contract_tiling = #gpumap.contract_tiling<instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4>} epilogue {
  ^bb0(%sum: f32, %v: f32):
    %h = arith.addf %v, %sum : f32
    tdim.yield %h, %h : f32, f32
  }
  tdim.return
}
