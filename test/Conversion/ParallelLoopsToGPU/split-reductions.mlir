// RUN: nerve-opt %s --nerve-fuse-kernel-loops --nerve-gpu-select-strategy --nerve-parallel-loops-to-gpu --split-input-file | FileCheck %s

// A column max (a fold along the outer dimension) is split into K chunks of
// rows, K = ceil(131072 * 4 / columns) (a thread per 16-byte vector of
// columns) capped so that chunks keep 64 rows, merged in kernel 1 in groups
// of 8. Kernel 1 has blocks of 8 slices x 32 vectors of four columns:
// thread (s, v) of the block for group g folds chunk 8g + s of its vector,
// eight vector loads in flight, then their rows in order into one partial
// per column, and stores lane j's partial at shared[j * 256 + thread].
// After a barrier, slice j < 4 (a column of each vector) merges the 8
// chunks' partials of lane j in order, each chunk past the last skipped,
// and stores the group's partial at partials[g * columns + column + j].
// When the buffer does not allow vectors, thread (s, column) folds one
// column in the same order (eight loads, then eight combines) and slice 0
// merges. Kernel 2 has blocks of 8 columns x 32 slices when the groups
// number 128 or more, of 64 columns x 4 slices otherwise: slice s combines
// groups s, s + S, ... of its column; slice 0 combines the slices'
// partials from shared memory in order, then stores.
// CHECK-LABEL: func.func @column_max
// CHECK:       %[[COLS:.*]] = memref.dim %{{.*}}, %c1
// CHECK:       %[[ROWS:.*]] = memref.dim %{{.*}}, %c0
// CHECK:       %[[WANT:.*]] = arith.ceildivui %c524288, %{{.*}} : index
// CHECK:       %[[CAP:.*]] = arith.ceildivui %{{.*}}, %c64 : index
// CHECK:       %[[K0:.*]] = arith.minui %[[WANT]], %[[CAP]] : index
// CHECK:       %[[K:.*]] = arith.maxui %[[K0]], %{{.*}} : index
// CHECK:       %[[GROUPS:.*]] = arith.ceildivui %[[K]], %c8 : index
// CHECK:       %[[SIZE:.*]] = arith.muli %[[GROUPS]], %{{.*}} : index
// CHECK:       %[[PARTIALS:.*]] = gpu.alloc (%[[SIZE]]) : memref<?xf32>
// CHECK:       scf.if %{{.*}} {
// CHECK:         gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c256{{.*}}, {{.*}}) dynamic_shared_memory_size %c4096_i32
// CHECK:           %[[STAGED:.*]] = memref.view {{.*}} to memref<1024xf32, #gpu.address_space<workgroup>>
// CHECK:           %[[LOCAL:.*]] = arith.remui %{{.*}}, %c32
// CHECK:           %[[SLICE:.*]] = arith.divui %{{.*}}, %c32
// CHECK:           scf.for %[[ITEM:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             %[[GROUP:.*]] = arith.divui %[[ITEM]], %{{.*}} : index
// CHECK:             %[[FIRST:.*]] = arith.muli %[[GROUP]], %c8
// CHECK:             arith.addi %[[FIRST]], %[[SLICE]] : index
// CHECK:             scf.for {{.*}} iter_args(%[[P0:[^ ]*]] = %{{.*}}, %[[P1:[^ ]*]] = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (f32, f32, f32, f32) {
// CHECK-COUNT-8:       vector.load %{{.*}}[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<?x?xf32>, vector<4xf32>
// CHECK-NOT:           vector.load
// CHECK:               %[[R0:.*]] = arith.maximumf %[[P0]], %{{.*}} : f32
// CHECK-NEXT:          arith.maximumf %[[P1]], %{{.*}} : f32
// CHECK-NEXT:          arith.maximumf
// CHECK-NEXT:          arith.maximumf
// CHECK-NEXT:          arith.maximumf %[[R0]], %{{.*}} : f32
// CHECK-COUNT-27:      arith.maximumf
// CHECK-NEXT:          scf.yield
// CHECK:             scf.for {{.*}} -> (f32, f32, f32, f32) {
// CHECK:             %[[AT0:.*]] = arith.addi %c0{{.*}}, %[[THREAD:[^ ]*]] : index
// CHECK-NEXT:        memref.store %{{.*}}, %[[STAGED]][%[[AT0]]]
// CHECK:             %[[AT3:.*]] = arith.addi %c768{{.*}}, %[[THREAD]] : index
// CHECK-NEXT:        memref.store %{{.*}}, %[[STAGED]][%[[AT3]]]
// CHECK-NEXT:        gpu.barrier
// CHECK:             %[[LANE:.*]] = arith.cmpi ult, %[[SLICE]], %c4
// CHECK:             scf.if
// CHECK:               memref.load %[[STAGED]]
// CHECK-COUNT-7:       memref.load %[[STAGED]]
// CHECK-NOT:           memref.load
// CHECK:               memref.store %{{.*}}, %[[PARTIALS]][%{{.*}}] : memref<?xf32>
// CHECK:             }
// CHECK-NEXT:        gpu.barrier
// CHECK:       } else {
// CHECK:         gpu.launch {{.*}} dynamic_shared_memory_size %c1024_i32
// CHECK:           scf.for %[[ITEM:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             scf.for {{.*}} iter_args(%[[P:[^ ]*]] = %{{.*}}) -> (f32) {
// CHECK-COUNT-8:       memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x?xf32>
// CHECK-NEXT:          %[[S0:.*]] = arith.maximumf %[[P]], %{{.*}} : f32
// CHECK-NEXT:          %[[S1:.*]] = arith.maximumf %[[S0]], %{{.*}} : f32
// CHECK-NEXT:          %[[S2:.*]] = arith.maximumf %[[S1]], %{{.*}} : f32
// CHECK-NEXT:          %[[S3:.*]] = arith.maximumf %[[S2]], %{{.*}} : f32
// CHECK-NEXT:          %[[S4:.*]] = arith.maximumf %[[S3]], %{{.*}} : f32
// CHECK-NEXT:          %[[S5:.*]] = arith.maximumf %[[S4]], %{{.*}} : f32
// CHECK-NEXT:          %[[S6:.*]] = arith.maximumf %[[S5]], %{{.*}} : f32
// CHECK-NEXT:          %[[S7:.*]] = arith.maximumf %[[S6]], %{{.*}} : f32
// CHECK-NEXT:          scf.yield %[[S7]] : f32
// CHECK:             scf.for {{.*}} -> (f32) {
// CHECK:             gpu.barrier
// CHECK:             arith.cmpi ult, %{{.*}}, %c1
// CHECK:             scf.if
// CHECK-COUNT-8:       memref.load %{{.*}} : memref<256xf32, #gpu.address_space<workgroup>>
// CHECK:               memref.store %{{.*}}, %[[PARTIALS]][%{{.*}}] : memref<?xf32>
// CHECK:       }
// CHECK:       %[[MANY:.*]] = arith.cmpi uge, %[[GROUPS]], %c128
// CHECK:       scf.if %[[MANY]] {
// CHECK:         gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c256{{.*}}, {{.*}}) dynamic_shared_memory_size %c1024_i32
// CHECK:           %[[SLICES:.*]] = memref.view {{.*}} to memref<256xf32, #gpu.address_space<workgroup>>
// CHECK:           %[[LOCAL:.*]] = arith.remui %{{.*}}, %c8
// CHECK:           %[[SLICE:.*]] = arith.divui %{{.*}}, %c8
// CHECK:           scf.for
// CHECK:             arith.maxsi %[[GROUPS]], %c0
// CHECK:             scf.for {{.*}} -> (f32, f32, f32, f32) {
// CHECK-COUNT-4:       memref.load %[[PARTIALS]]
// CHECK:             memref.store %{{.*}}, %[[SLICES]][%{{.*}}]
// CHECK-NEXT:        gpu.barrier
// CHECK:             scf.if
// CHECK-COUNT-32:      memref.load %[[SLICES]]
// CHECK:               memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<?xf32>
// CHECK:             }
// CHECK-NEXT:        gpu.barrier
// CHECK:       } else {
// CHECK:         gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c256{{.*}}, {{.*}}) dynamic_shared_memory_size %c1024_i32
// CHECK:           %[[FSLICES:.*]] = memref.view {{.*}} to memref<256xf32, #gpu.address_space<workgroup>>
// CHECK:           arith.remui %{{.*}}, %c64
// CHECK:           arith.divui %{{.*}}, %c64
// CHECK:             arith.maxsi %[[GROUPS]], %c0
// CHECK:             scf.if
// CHECK-COUNT-4:       memref.load %[[FSLICES]]
// CHECK-NOT:           memref.load %[[FSLICES]]
// CHECK:               memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<?xf32>
// CHECK:       gpu.dealloc %[[PARTIALS]]
func.func @column_max(%x: memref<?x?xf32>, %m: memref<?xf32>) attributes {nerve.kernel} {
  %ninf = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cols = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%c) = (%c0) to (%cols) step (%c1) {
    %rows = memref.dim %x, %c0 : memref<?x?xf32>
    %r = scf.for %i = %c0 to %rows step %c1 iter_args(%acc = %ninf) -> (f32) {
      %v = memref.load %x[%i, %c] : memref<?x?xf32>
      %n = arith.maximumf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %r, %m[%c] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// Statically short folds, and folds whose combine has no known identity (a
// product), keep a thread per column: four neighbouring columns, loaded as
// vectors, when the buffers allow; one otherwise.
// CHECK-LABEL: func.func @short
// CHECK-NOT:   gpu.alloc
// CHECK:       gpu.launch
// CHECK:         scf.for {{.*}} iter_args({{.*}}, {{.*}}, {{.*}}, {{.*}}) -> (f32, f32, f32, f32)
// CHECK:           vector.load %{{.*}} : memref<16x?xf32>, vector<4xf32>
// CHECK:         vector.store %{{.*}} : memref<?xf32>, vector<4xf32>
// CHECK:       } else {
// CHECK:       gpu.launch
// CHECK-NOT:     vector.load
// CHECK-NOT:   gpu.launch
func.func @short(%x: memref<16x?xf32>, %m: memref<?xf32>) attributes {nerve.kernel} {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %cols = memref.dim %x, %c1 : memref<16x?xf32>
  scf.parallel (%c) = (%c0) to (%cols) step (%c1) {
    %r = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%i, %c] : memref<16x?xf32>
      %n = arith.addf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %r, %m[%c] : memref<?xf32>
    scf.reduce
  }
  return
}

// CHECK-LABEL: func.func @product
// CHECK-NOT:   gpu.alloc
// CHECK:       gpu.launch
// CHECK:       } else {
// CHECK:       gpu.launch
// CHECK-NOT:   gpu.launch
func.func @product(%x: memref<?x?xf32>, %m: memref<?xf32>) attributes {nerve.kernel} {
  %one = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %x, %c0 : memref<?x?xf32>
  %cols = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%c) = (%c0) to (%cols) step (%c1) {
    %r = scf.for %i = %c0 to %rows step %c1 iter_args(%acc = %one) -> (f32) {
      %v = memref.load %x[%i, %c] : memref<?x?xf32>
      %n = arith.mulf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %r, %m[%c] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// Rows of a column-major matrix (r contiguous) summed over c: the fold walks
// x's outer dimension, neighbouring rows are neighbours in memory. The
// vector form reads a transposed view of x (c first, r contiguous last),
// four rows a thread.
// CHECK-LABEL: func.func @column_major_rows
// CHECK:       %[[VIEW:.*]] = memref.transpose %arg0 (d0, d1) -> (d1, d0) : memref<?x?xf32, strided<[1, ?]>> to memref<?x?xf32, strided<[?, 1]>>
// CHECK:       memref.extract_strided_metadata %[[VIEW]]
// CHECK:       scf.if
// CHECK:         gpu.launch
// CHECK-COUNT-4:   vector.load %[[VIEW]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<?x?xf32, strided<[?, 1]>>, vector<4xf32>
// CHECK:       } else {
// CHECK:         gpu.launch
// CHECK-COUNT-4:   memref.load %arg0[%{{.*}}, %{{.*}}] : memref<?x?xf32, strided<[1, ?]>>
func.func @column_major_rows(%x: memref<?x?xf32, strided<[1, ?]>>, %s: memref<?xf32>)
    attributes {nerve.kernel} {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %x, %c0 : memref<?x?xf32, strided<[1, ?]>>
  %cols = memref.dim %x, %c1 : memref<?x?xf32, strided<[1, ?]>>
  scf.parallel (%r) = (%c0) to (%rows) step (%c1) {
    %t = scf.for %c = %c0 to %cols step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%r, %c] : memref<?x?xf32, strided<[1, ?]>>
      %n = arith.addf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %t, %s[%r] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// A column sum of f16 data (f32 arithmetic): eight columns a 16-byte vector,
// the same 128K threads aimed at (1048576 columns = 131072 x 8), one f32
// partial per column, folded in row order after eight vector loads.
// CHECK-LABEL: func.func @column_sum_f16
// CHECK:       arith.ceildivui %c1048576, %{{.*}} : index
// CHECK:       scf.if
// CHECK:         gpu.launch
// CHECK:           scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-COUNT-8:     vector.load %{{.*}} {alignment = 16 : i64} : memref<?x?xf16>, vector<8xf16>
// CHECK-COUNT-64:    arith.addf
// CHECK-NEXT:        scf.yield
func.func @column_sum_f16(%x: memref<?x?xf16>, %s: memref<?xf32>) attributes {nerve.kernel} {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cols = memref.dim %x, %c1 : memref<?x?xf16>
  scf.parallel (%c) = (%c0) to (%cols) step (%c1) {
    %rows = memref.dim %x, %c0 : memref<?x?xf16>
    %r = scf.for %i = %c0 to %rows step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%i, %c] : memref<?x?xf16>
      %e = arith.extf %v : f16 to f32
      %n = arith.addf %acc, %e : f32
      scf.yield %n : f32
    }
    memref.store %r, %s[%c] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// A fold of two accumulators that states its merge (a fold.for, as
// tdim.reduce lowers one): kernel 1 folds each chunk with the loop's own
// step (the map, v * v, before it), a partial buffer per accumulator;
// kernel 2 merges partial tuples with the merge region, a shared array per
// accumulator. The fold.for goes.
// CHECK-LABEL: func.func @sum_and_max_square
// CHECK:       %[[PS:.*]] = gpu.alloc (%{{.*}}) : memref<?xf32>
// CHECK:       %[[PM:.*]] = gpu.alloc (%{{.*}}) : memref<?xf32>
// CHECK:       } else {
// CHECK:         gpu.launch
// CHECK:             scf.for {{.*}} iter_args(%[[S:[^ ]*]] = %{{.*}}, %[[M:[^ ]*]] = %{{.*}}) -> (f32, f32) {
// CHECK-COUNT-8:       arith.mulf
// CHECK-NEXT:          %[[S0:.*]] = arith.addf %[[S]], %{{.*}} : f32
// CHECK-NEXT:          %[[M0:.*]] = arith.maximumf %[[M]], %{{.*}} : f32
// CHECK-NEXT:          arith.addf %[[S0]]
// CHECK-NEXT:          arith.maximumf %[[M0]]
// CHECK:             memref.store %{{.*}}, %[[PS]][%{{.*}}] : memref<?xf32>
// CHECK-NEXT:        memref.store %{{.*}}, %[[PM]][%{{.*}}] : memref<?xf32>
// CHECK:       gpu.launch {{.*}} dynamic_shared_memory_size %c2048_i32
// CHECK:         %[[SS:.*]] = memref.view {{.*}}[%c0{{.*}}][] {{.*}} to memref<256xf32, #gpu.address_space<workgroup>>
// CHECK:         %[[SM:.*]] = memref.view {{.*}}[%c1024{{.*}}][] {{.*}} to memref<256xf32, #gpu.address_space<workgroup>>
// CHECK:           scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-NOT:         arith.mulf
// CHECK:             memref.load %[[PS]]
// CHECK-NEXT:        memref.load %[[PM]]
// CHECK-NEXT:        arith.addf
// CHECK-NEXT:        arith.maximumf
// CHECK:           memref.store %{{.*}}, %[[SS]][%{{.*}}]
// CHECK-NEXT:      memref.store %{{.*}}, %[[SM]][%{{.*}}]
// CHECK-NEXT:      gpu.barrier
// CHECK:           scf.if
// CHECK-COUNT-32:    arith.maximumf
// CHECK:             memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<?xf32>
// CHECK-NEXT:        memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<?xf32>
// CHECK:       gpu.dealloc %[[PS]]
// CHECK-NEXT:  gpu.dealloc %[[PM]]
// CHECK-NOT:   fold.for
func.func @sum_and_max_square(%x: memref<?x?xf32>, %s: memref<?xf32>, %m: memref<?xf32>) attributes {nerve.kernel} {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cols = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%c) = (%c0) to (%cols) step (%c1) {
    %rows = memref.dim %x, %c0 : memref<?x?xf32>
    %r:2 = fold.for %i = %c0 to %rows step %c1 iter_args(%as = %zero, %am = %zero) -> (f32, f32) {
      %v = memref.load %x[%i, %c] : memref<?x?xf32>
      %sq = arith.mulf %v, %v : f32
      %ns = arith.addf %as, %v : f32
      %nm = arith.maximumf %am, %sq : f32
      fold.yield %ns, %nm : f32, f32
    } merge {
    ^bb0(%s1: f32, %m1: f32, %s2: f32, %m2: f32):
      %sum = arith.addf %s1, %s2 : f32
      %max = arith.maximumf %m1, %m2 : f32
      fold.yield %sum, %max : f32, f32
    }
    memref.store %r#0, %s[%c] : memref<?xf32>
    memref.store %r#1, %m[%c] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// A fold.for stating max_sum_exp (an online softmax's statistics, from a
// tdim.reduce that tdim-decompose built so): kernel 1 takes the rows in
// flight as blocks, two of four rows for f32 vectors. A block's maximum as
// a tree, the new maximum, one exp against it per value (1 where equal)
// summed as a tree, the running sum rescaled once; no step-by-step
// minimum. The tail and kernel 2 fold as before.
// CHECK-LABEL: func.func @max_sum_exp
// CHECK:       gpu.launch
// CHECK:           scf.for {{.*}} iter_args(%[[M:arg[0-9]+]] = %{{[^,]*}}, %[[S:arg[0-9]+]] = %{{[^,]*}}, {{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-COUNT-8:     vector.load %arg0{{.*}} vector<4xf32>
// CHECK-NOT:         arith.minimumf
// CHECK:             %[[A:.*]] = arith.maximumf
// CHECK-NEXT:        %[[B:.*]] = arith.maximumf
// CHECK-NEXT:        %[[BLOCK:.*]] = arith.maximumf %[[A]], %[[B]] : f32
// CHECK-NEXT:        %[[M1:.*]] = arith.maximumf %[[M]], %[[BLOCK]] : f32
// CHECK-NOT:         arith.minimumf
// CHECK-COUNT-4:     math.exp
// CHECK-NOT:         arith.minimumf
// CHECK:             %[[SAME:.*]] = arith.cmpf oeq, %[[M]], %[[M1]] : f32
// CHECK-NEXT:        %[[D:.*]] = arith.subf %[[M]], %[[M1]] : f32
// CHECK-NEXT:        %[[E:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT:        %[[SCALE:.*]] = arith.select %[[SAME]], %{{.*}}, %[[E]] : f32
// CHECK-NEXT:        %[[RESCALED:.*]] = arith.mulf %[[S]], %[[SCALE]] : f32
// CHECK-NEXT:        %[[S1:.*]] = arith.addf %[[RESCALED]], %{{.*}} : f32
// CHECK:             arith.maximumf
// CHECK-NEXT:        arith.maximumf
// CHECK-NEXT:        arith.maximumf
// CHECK-NEXT:        %[[M2:.*]] = arith.maximumf %[[M1]], %{{.*}} : f32
// CHECK-NOT:         arith.minimumf
// CHECK:             arith.mulf %[[S1]], %{{.*}} : f32
// CHECK:             scf.yield
// CHECK:           scf.for
// CHECK:             arith.minimumf
func.func @max_sum_exp(%x: memref<?x?xf32>, %m: memref<?xf32>, %s: memref<?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %cols = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%c) = (%c0) to (%cols) step (%c1) {
    %rows = memref.dim %x, %c0 : memref<?x?xf32>
    %r:2 = fold.for %i = %c0 to %rows step %c1 iter_args(%am = %ninf, %as = %zero) -> (f32, f32) {
      %v = memref.load %x[%i, %c] : memref<?x?xf32>
      %hi = arith.maximumf %am, %v : f32
      %lo = arith.minimumf %am, %v : f32
      %same = arith.cmpf oeq, %am, %v : f32
      %d = arith.subf %lo, %hi : f32
      %e = math.exp %d : f32
      %scale = arith.select %same, %one, %e : f32
      %ge = arith.cmpf oge, %am, %v : f32
      %keep = arith.select %ge, %as, %one : f32
      %scaled = arith.select %ge, %one, %as : f32
      %t = arith.mulf %scaled, %scale : f32
      %ns = arith.addf %t, %keep : f32
      fold.yield %hi, %ns : f32, f32
    } merge max_sum_exp {
    ^bb0(%m1: f32, %s1: f32, %m2: f32, %s2: f32):
      %unit = arith.constant 1.0 : f32
      %max = arith.maximumf %m1, %m2 : f32
      %lo = arith.minimumf %m1, %m2 : f32
      %same = arith.cmpf oeq, %m1, %m2 : f32
      %d = arith.subf %lo, %max : f32
      %e = math.exp %d : f32
      %scale = arith.select %same, %unit, %e : f32
      %first = arith.cmpf oge, %m1, %m2 : f32
      %larger = arith.select %first, %s1, %s2 : f32
      %smaller = arith.select %first, %s2, %s1 : f32
      %scaled = arith.mulf %smaller, %scale : f32
      %sum = arith.addf %scaled, %larger : f32
      fold.yield %max, %sum : f32, f32
    }
    memref.store %r#0, %m[%c] : memref<?xf32>
    memref.store %r#1, %s[%c] : memref<?xf32>
    scf.reduce
  }
  return
}
