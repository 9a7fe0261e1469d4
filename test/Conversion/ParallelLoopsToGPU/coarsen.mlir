// RUN: nerve-opt %s --nerve-fuse-kernel-loops --nerve-gpu-select-strategy --nerve-parallel-loops-to-gpu="coarsen=4" --split-input-file | FileCheck %s

// A straight-line body runs 4 iterations per thread, interleaved op by op:
// the 4 loads come before any store. Over rows at least half a tile (512
// columns) wide it runs tiles of 1024 columns of a row per block (the row
// from one division per tile, thread t taking columns t, t + 256, ...: no
// division per element); over narrower rows, every iteration by its flat
// position, 4 per thread one grid stride apart, with a quarter of the
// threads. Either way, iterations past the end load at the last one's
// indices and store nothing.
// CHECK-LABEL: func.func @map
// CHECK: %[[COLS:.*]] = memref.dim %{{.*}}, %c1
// CHECK: %[[TOTAL:.*]] = arith.muli
// CHECK: %[[WIDE:.*]] = arith.cmpi uge, %{{.*}}, %c512 : index
// CHECK: scf.if %[[WIDE]] {
// CHECK:   %[[TILES:.*]] = arith.ceildivui %{{.*}}, %c1024 : index
// CHECK:   gpu.launch
// CHECK:     scf.for %[[ITEM:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:       %[[ROW:.*]] = arith.divui %[[ITEM]], %[[TILES]] : index
// CHECK-NOT:   arith.divui
// CHECK:       %[[C1:.*]] = arith.addi %{{.*}}, %c256{{.*}} : index
// CHECK:       %[[V1:.*]] = arith.cmpi ult, %[[C1]], %{{.*}} : index
// CHECK-COUNT-4: memref.load %{{.*}}[%{{.*}}, %{{.*}}]
// CHECK-NOT:   memref.load
// CHECK-COUNT-4: arith.mulf
// CHECK:       scf.if
// CHECK-NEXT:    memref.store
// CHECK:       scf.if %[[V1]] {
// CHECK-NEXT:    memref.store
// CHECK: } else {
// CHECK: %[[C1024:.*]] = arith.constant 1024 : index
// CHECK: arith.ceildivui %[[TOTAL]], %[[C1024]] : index
// CHECK: gpu.launch blocks({{.*}}) in (%[[GX:[a-z0-9_]+]] = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads
// CHECK:   %[[STRIDE:.*]] = arith.muli %[[GX]], %{{.*}} : index
// CHECK:   %[[STEP:.*]] = arith.muli %[[STRIDE]], %{{.*}} : index
// CHECK:   scf.for %[[L:.*]] = %{{.*}} to %[[TOTAL]] step %[[STEP]] {
// CHECK:     %[[L1:.*]] = arith.addi %[[L]], %{{.*}} : index
// CHECK:     %[[F1:.*]] = arith.cmpi ult, %[[L1]], %[[TOTAL]] : index
// CHECK:     arith.select %[[F1]]
// CHECK-COUNT-4: memref.load
// CHECK-NOT: memref.load
// CHECK-COUNT-4: arith.mulf
// CHECK:     memref.store
// CHECK:     scf.if %[[F1]] {
// CHECK-NEXT:  memref.store
// CHECK:     scf.if
// CHECK:     scf.if
// CHECK:   gpu.terminator
func.func @map(%x: memref<?x?xf32>, %y: memref<?x?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = memref.dim %x, %c0 : memref<?x?xf32>
  %c = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%r, %c) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x?xf32>
    %w = arith.mulf %v, %v : f32
    memref.store %w, %y[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return
}

// -----

// A body with a loop inside (a product per row: warps split only sums,
// minima and maxima, warp-rows.mlir) keeps one iteration per thread.
// CHECK-LABEL: func.func @rows
// CHECK: %[[C256:.*]] = arith.constant 256 : index
// CHECK: arith.ceildivui %{{.*}}, %[[C256]] : index
// CHECK: gpu.launch
// CHECK:   scf.for
// CHECK:     scf.for
// CHECK-NOT: scf.if
// CHECK: gpu.terminator
func.func @rows(%x: memref<?x?xf32>, %s: memref<?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = memref.dim %x, %c0 : memref<?x?xf32>
  %c = memref.dim %x, %c1 : memref<?x?xf32>
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%r) step (%c1) {
    %sum = scf.for %j = %c0 to %c step %c1 iter_args(%acc = %one) -> (f32) {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      %t = arith.mulf %acc, %v : f32
      scf.yield %t : f32
    }
    memref.store %sum, %s[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// A static trip count smaller than a block of 4-iteration threads takes
// fewer iterations per thread.
// CHECK-LABEL: func.func @small
// CHECK: gpu.launch
// CHECK-COUNT-1: memref.store
// CHECK-NOT: memref.store
func.func @small(%y: memref<300xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c300 = arith.constant 300 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c300) step (%c1) {
    memref.store %f, %y[%i] : memref<300xf32>
    scf.reduce
  }
  return
}
