// RUN: nerve-opt %s --nerve-fuse-kernel-loops --nerve-gpu-select-strategy --nerve-parallel-loops-to-gpu="coarsen=1" --split-input-file | FileCheck %s

// A 2-D parallel loop becomes one 1-D launch of 256-thread blocks: the
// thread's linear index walks the iterations innermost-first in a
// grid-stride loop, and nothing launches when there is nothing to do.
// CHECK-LABEL: func.func @map
// CHECK: %[[TOTAL:.*]] = arith.muli
// CHECK: %[[C256:.*]] = arith.constant 256 : index
// CHECK: %[[GRID0:.*]] = arith.ceildivui %[[TOTAL]], %[[C256]] : index
// CHECK: %[[GRID:.*]] = arith.minui %[[GRID0]], %{{.*}} : index
// CHECK: %[[NONEMPTY:.*]] = arith.cmpi ugt, %[[TOTAL]], %{{.*}} : index
// CHECK: scf.if %[[NONEMPTY]] {
// CHECK:   gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%[[GX:.*]] = %[[GRID]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C256]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) {
// CHECK:     %[[B:.*]] = arith.muli %[[BX]], %[[C256]] : index
// CHECK:     %[[FIRST:.*]] = arith.addi %[[B]], %[[TX]] : index
// CHECK:     %[[STRIDE:.*]] = arith.muli %[[GX]], %[[C256]] : index
// CHECK:     scf.for %[[L:.*]] = %[[FIRST]] to %[[TOTAL]] step %[[STRIDE]] {
// CHECK:       %[[C:.*]] = arith.remui %[[L]], %{{.*}} : index
// CHECK:       %[[R:.*]] = arith.divui %[[L]], %{{.*}} : index
// CHECK:       memref.load %{{.*}}[%{{.*}}, %{{.*}}]
// CHECK:     gpu.terminator
func.func @map(%x: memref<?x?xf32>, %y: memref<?x?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = memref.dim %x, %c0 : memref<?x?xf32>
  %c = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%r, %c) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x?xf32>
    memref.store %v, %y[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return
}

// -----

// A small static trip count takes a smaller block, a whole number of warps.
// CHECK-LABEL: func.func @small
// CHECK: %[[T:.*]] = arith.constant 64 : index
// CHECK: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %[[T]], {{.*}})
func.func @small(%y: memref<37xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c37 = arith.constant 37 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c37) step (%c1) {
    memref.store %f, %y[%i] : memref<37xf32>
    scf.reduce
  }
  return
}

// -----

// Code that touches memory outside a parallel loop runs in one thread, and
// so do the host-looking ops that use its results. Buffers become device
// allocations.
// CHECK-LABEL: func.func @sequential
// CHECK: %[[A:.*]] = gpu.alloc () : memref<f32>
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[ONE:c1[_0-9]*]], %{{.*}} = %{{c1[_0-9]*}}, %{{.*}} = %{{c1[_0-9]*}}) threads({{.*}}) in (%{{.*}} = %[[ONE]], %{{.*}} = %{{c1[_0-9]*}}, %{{.*}} = %{{c1[_0-9]*}}) {
// CHECK:   scf.for
// CHECK:   arith.truncf
// CHECK:   memref.store
// CHECK:   gpu.terminator
// CHECK: gpu.dealloc %[[A]] : memref<f32>
func.func @sequential(%x: memref<?xf32>, %s: memref<f16>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %a = memref.alloc() : memref<f32>
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    %v = memref.load %x[%i] : memref<?xf32>
    %t = arith.addf %acc, %v : f32
    scf.yield %t : f32
  }
  %h = arith.truncf %sum : f32 to f16
  memref.store %h, %s[] : memref<f16>
  memref.dealloc %a : memref<f32>
  return
}

// -----

// Parallel loops nested directly in each other (a neuron over [b, c]) are
// one loop over both dimensions: all of them map onto threads. The inner
// bound moves out.
// CHECK-LABEL: func.func @nested
// CHECK:     %[[B:.*]] = memref.dim %{{.*}}, %{{.*}} : memref<?x?x?xf32>
// CHECK:     %[[C:.*]] = memref.dim %{{.*}}, %{{.*}} : memref<?x?x?xf32>
// CHECK:     %[[TOTAL:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK:     gpu.launch
// CHECK:       scf.for %{{.*}} = %{{.*}} to %[[TOTAL]] step
// CHECK:         arith.remui
// CHECK:         arith.divui
// CHECK:         scf.for
// CHECK-NOT: gpu.launch
func.func @nested(%x: memref<?x?x?xf32>, %y: memref<?x?x?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = memref.dim %x, %c1 : memref<?x?x?xf32>
  scf.parallel (%i) = (%c0) to (%b) step (%c1) {
    %c = memref.dim %x, %c2 : memref<?x?x?xf32>
    scf.parallel (%j) = (%c0) to (%c) step (%c1) {
      %t = memref.dim %x, %c0 : memref<?x?x?xf32>
      scf.for %s = %c0 to %t step %c1 {
        %v = memref.load %x[%s, %i, %j] : memref<?x?x?xf32>
        memref.store %v, %y[%s, %i, %j] : memref<?x?x?xf32>
      }
      scf.reduce
    }
    scf.reduce
  }
  return
}
