// RUN: nerve-opt %s --nerve-parallel-loops-to-gpu --split-input-file | FileCheck %s

// A column max (a fold along the outer dimension) is split into K chunks of
// rows, K = ceil(131072 * 4 / columns) (a thread per 16-byte vector of
// columns) capped so that chunks keep 64 rows. Kernel 1 has thread (k,
// vector of four columns) fold its chunk, four vector loads in flight, into
// four partials side by side (partials[k * columns + column + j]) when the
// buffer allows vectors; otherwise thread (k, column) folds one column in
// the same order. Kernel 2 has blocks of 8 columns x 32 slices: slice s
// combines chunks s, s + 32, ... of its column; slice 0 combines the
// slices' partials from shared memory in order, then stores.
// CHECK-LABEL: func.func @column_max
// CHECK:       %[[COLS:.*]] = memref.dim %{{.*}}, %c1
// CHECK:       %[[ROWS:.*]] = memref.dim %{{.*}}, %c0
// CHECK:       %[[WANT:.*]] = arith.ceildivui %c524288, %{{.*}} : index
// CHECK:       %[[CAP:.*]] = arith.ceildivui %{{.*}}, %c64 : index
// CHECK:       %[[K0:.*]] = arith.minui %[[WANT]], %[[CAP]] : index
// CHECK:       %[[K:.*]] = arith.maxui %[[K0]], %{{.*}} : index
// CHECK:       %[[PARTIALS:.*]] = gpu.alloc (%{{.*}}) : memref<?xf32>
// CHECK:       scf.if %{{.*}} {
// CHECK:         gpu.launch
// CHECK:           scf.for %[[ITEM:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             %[[CHUNK:.*]] = arith.divui %[[ITEM]], %{{.*}} : index
// CHECK:             scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-COUNT-4:       vector.load %{{.*}}[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<?x?xf32>, vector<4xf32>
// CHECK:             scf.for {{.*}} -> (f32, f32, f32, f32) {
// CHECK-COUNT-4:     memref.store %{{.*}}, %[[PARTIALS]][%{{.*}}] : memref<?xf32>
// CHECK:       } else {
// CHECK:         gpu.launch
// CHECK:           scf.for %[[ITEM:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             scf.for {{.*}} -> (f32, f32, f32, f32) {
// CHECK-COUNT-4:       memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x?xf32>
// CHECK:             memref.store %{{.*}}, %[[PARTIALS]][%{{.*}}] : memref<?xf32>
// CHECK:       }
// CHECK:       gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c256{{.*}}, {{.*}}) dynamic_shared_memory_size %c1024_i32
// CHECK:         %[[SLICES:.*]] = memref.view {{.*}} to memref<256xf32, #gpu.address_space<workgroup>>
// CHECK:         %[[LOCAL:.*]] = arith.remui %{{.*}}, %c8
// CHECK:         %[[SLICE:.*]] = arith.divui %{{.*}}, %c8
// CHECK:         scf.for
// CHECK:           scf.for {{.*}} -> (f32, f32, f32, f32) {
// CHECK-COUNT-4:     memref.load %[[PARTIALS]]
// CHECK:           memref.store %{{.*}}, %[[SLICES]][%{{.*}}]
// CHECK-NEXT:      gpu.barrier
// CHECK:           scf.if
// CHECK-COUNT-32:    memref.load %[[SLICES]]
// CHECK:             memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<?xf32>
// CHECK:           }
// CHECK-NEXT:      gpu.barrier
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
