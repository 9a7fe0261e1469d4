// RUN: nerve-opt %s --nerve-parallel-loops-to-gpu --split-input-file | FileCheck %s

// A column max (a fold along the outer dimension) is split into K chunks of
// rows, K = ceil(270336 / columns) capped so that chunks keep 64 rows:
// kernel 1 has thread (k, column) fold its chunk, four loads in flight,
// into a partial (partials[k * columns + column]); kernel 2 has a thread
// per column combine the K partials in order, then store.
// CHECK-LABEL: func.func @column_max
// CHECK:       %[[COLS:.*]] = memref.dim %{{.*}}, %c1
// CHECK:       %[[ROWS:.*]] = memref.dim %{{.*}}, %c0
// CHECK:       %[[WANT:.*]] = arith.ceildivui %c270336, %{{.*}} : index
// CHECK:       %[[CAP:.*]] = arith.ceildivui %{{.*}}, %c64 : index
// CHECK:       %[[K0:.*]] = arith.minui %[[WANT]], %[[CAP]] : index
// CHECK:       %[[K:.*]] = arith.maxui %[[K0]], %{{.*}} : index
// CHECK:       %[[PARTIALS:.*]] = gpu.alloc (%{{.*}}) : memref<?xf32>
// CHECK:       gpu.launch
// CHECK:         scf.for %[[ITEM:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %[[CHUNK:.*]] = arith.divui %[[ITEM]], %{{.*}} : index
// CHECK:           scf.for {{.*}} -> (f32, f32, f32, f32) {
// CHECK-COUNT-4:     memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x?xf32>
// CHECK:           memref.store %{{.*}}, %[[PARTIALS]][%[[ITEM]]] : memref<?xf32>
// CHECK:       gpu.launch
// CHECK:         scf.for %[[COL:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %[[MAX:.*]] = scf.for %[[J:.*]] = %c0{{.*}} to %[[K]] step %{{.*}} iter_args(%[[ACC:.*]] = %cst) -> (f32) {
// CHECK:             memref.load %[[PARTIALS]]
// CHECK:             arith.maximumf %[[ACC]], %{{.*}} : f32
// CHECK:           memref.store %[[MAX]], %{{.*}}[%{{.*}}] : memref<?xf32>
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
