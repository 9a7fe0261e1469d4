// RUN: nerve-opt --nerve-fuse-kernel-loops --nerve-gpu-select-strategy --nerve-parallel-loops-to-gpu %s | FileCheck %s

// A thread per neuron walking time (the shape convert-neuron-to-tdim
// gives a time-major neuron: time blocks carrying the potential, then the
// remaining steps one at a time). Blocks of 256 threads take 256
// consecutive neurons a time, striding over the grid; a thread past the
// last neuron repeats the last one (the index is clamped, nothing is
// guarded); each iteration of both walks ends with a barrier, so a
// block's warps stay on the same steps. This is the scalar launch, which
// runs when the host finds the buffers unfit for 16-byte vectors of
// neurons (VectorLanes.cpp, first).

// CHECK-LABEL: func.func @walk
// CHECK: vector.load
// CHECK-NOT: gpu.barrier
// CHECK: } else {
// CHECK: gpu.launch
// CHECK-SAME: threads({{.*}}) in ({{.*}} = %c256,
// CHECK: %[[FIRST:.*]] = arith.muli %{{.*}}, %c256
// CHECK: %[[STRIDE:.*]] = arith.muli %{{.*}}, %c256
// CHECK: %[[LAST:.*]] = arith.subi %[[TOTAL:.*]], %c1
// CHECK: scf.for %[[BASE:.*]] = %[[FIRST]] to %[[TOTAL]] step %[[STRIDE]] {
// CHECK: %[[MINE:.*]] = arith.addi %[[BASE]], %{{.*}}
// CHECK: %[[CLAMPED:.*]] = arith.minui %[[MINE]], %[[LAST]]
// CHECK: %[[ROW:.*]] = arith.muli %[[CLAMPED]], %c1
// CHECK: %[[N:.*]] = arith.addi %c0, %[[ROW]]
// CHECK-NOT: scf.if
// CHECK: scf.for {{.*}} step %c2 iter_args
// CHECK: memref.load %arg0[%{{.*}}, %[[N]]]
// CHECK: memref.store {{.*}}, %arg1[%{{.*}}, %[[N]]]
// CHECK: memref.store {{.*}}, %arg1[%{{.*}}, %[[N]]]
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.yield
// CHECK: scf.for
// CHECK: memref.load %arg0[%{{.*}}, %[[N]]]
// CHECK: memref.store {{.*}}, %arg1[%{{.*}}, %[[N]]]
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.yield
// CHECK: gpu.terminator
func.func @walk(%x: memref<?x?xf32>, %y: memref<?x?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %t = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %blocks = arith.divui %t, %c2 : index
    %whole = arith.muli %blocks, %c2 : index
    %v = scf.for %tb = %c0 to %whole step %c2 iter_args(%v0 = %zero) -> (f32) {
      %a = memref.load %x[%tb, %i] : memref<?x?xf32>
      %t1 = arith.addi %tb, %c1 : index
      %b = memref.load %x[%t1, %i] : memref<?x?xf32>
      %v1 = arith.addf %v0, %a : f32
      memref.store %v1, %y[%tb, %i] : memref<?x?xf32>
      %v2 = arith.addf %v1, %b : f32
      memref.store %v2, %y[%t1, %i] : memref<?x?xf32>
      scf.yield %v2 : f32
    }
    %rest = scf.for %s = %whole to %t step %c1 iter_args(%v0 = %v) -> (f32) {
      %a = memref.load %x[%s, %i] : memref<?x?xf32>
      %v1 = arith.addf %v0, %a : f32
      memref.store %v1, %y[%s, %i] : memref<?x?xf32>
      scf.yield %v1 : f32
    }
    scf.reduce
  }
  return
}

// Over two neuron dimensions (merged into one loop), with a parameter read
// by every thread (a 0-d buffer): the same lockstep walk.
// CHECK-LABEL: func.func @walk_2d
// CHECK: } else {
// CHECK: gpu.launch
// CHECK: arith.minui %{{.*}}, %{{.*}} : index
// CHECK: scf.for
// CHECK: memref.load %arg2[]
// CHECK: memref.store
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: }
func.func @walk_2d(%x: memref<?x?x?xf32>, %y: memref<?x?x?xf32>, %w: memref<f32>)
    attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %t = memref.dim %x, %c0 : memref<?x?x?xf32>
  %b = memref.dim %x, %c1 : memref<?x?x?xf32>
  %n = memref.dim %x, %c2 : memref<?x?x?xf32>
  scf.parallel (%j, %i) = (%c0, %c0) to (%b, %n) step (%c1, %c1) {
    scf.for %s = %c0 to %t step %c1 {
      %a = memref.load %x[%s, %j, %i] : memref<?x?x?xf32>
      %p = memref.load %w[] : memref<f32>
      %r = arith.mulf %a, %p : f32
      memref.store %r, %y[%s, %j, %i] : memref<?x?x?xf32>
    }
    scf.reduce
  }
  return
}

// Rows of 16-bit data walk in blocks of 128 threads (a 0-d f32 parameter
// is not a row); rows of f16 and f32 data keep the option's 256.
// CHECK-LABEL: func.func @walk_half
// CHECK: } else {
// CHECK: gpu.launch
// CHECK-SAME: threads({{.*}}) in ({{.*}} = %c128,
// CHECK: arith.muli %{{.*}}, %c128
// CHECK: memref.load %arg2[]
// CHECK: memref.store
// CHECK-NEXT: gpu.barrier
// CHECK-LABEL: func.func @walk_mixed
// CHECK: } else {
// CHECK: gpu.launch
// CHECK-SAME: threads({{.*}}) in ({{.*}} = %c256,
// CHECK: gpu.barrier
func.func @walk_half(%x: memref<?x?xf16>, %y: memref<?x?xbf16>, %w: memref<f32>)
    attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = memref.dim %x, %c0 : memref<?x?xf16>
  %n = memref.dim %x, %c1 : memref<?x?xf16>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %s = %c0 to %t step %c1 {
      %a = memref.load %x[%s, %i] : memref<?x?xf16>
      %p = memref.load %w[] : memref<f32>
      %e = arith.extf %a : f16 to f32
      %r = arith.mulf %e, %p : f32
      %h = arith.truncf %r : f32 to bf16
      memref.store %h, %y[%s, %i] : memref<?x?xbf16>
    }
    scf.reduce
  }
  return
}
func.func @walk_mixed(%x: memref<?x?xf16>, %y: memref<?x?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = memref.dim %x, %c0 : memref<?x?xf16>
  %n = memref.dim %x, %c1 : memref<?x?xf16>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %s = %c0 to %t step %c1 {
      %a = memref.load %x[%s, %i] : memref<?x?xf16>
      %e = arith.extf %a : f16 to f32
      memref.store %e, %y[%s, %i] : memref<?x?xf32>
    }
    scf.reduce
  }
  return
}

// Not in lockstep (a thread per iteration, no barrier): a walk that reads
// back what it writes (a repeated last iteration would race with it), one
// whose length depends on the iteration (threads would reach different
// numbers of barriers), one along the contiguous dimension (neighbouring
// threads are a row apart: nothing to keep together), and one that writes
// through a view of the buffer it reads.
// CHECK-LABEL: func.func @not_in_step
// CHECK-NOT: gpu.barrier
// CHECK: return
func.func @not_in_step(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %len: memref<?xindex>)
    attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %s = %c0 to %t step %c1 {
      %a = memref.load %y[%s, %i] : memref<?x?xf32>
      %r = arith.addf %a, %a : f32
      memref.store %r, %y[%s, %i] : memref<?x?xf32>
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %mine = memref.load %len[%i] : memref<?xindex>
    scf.for %s = %c0 to %mine step %c1 {
      %a = memref.load %x[%s, %i] : memref<?x?xf32>
      memref.store %a, %y[%s, %i] : memref<?x?xf32>
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%t) step (%c1) {
    scf.for %s = %c0 to %n step %c1 {
      %a = memref.load %x[%i, %s] : memref<?x?xf32>
      memref.store %a, %y[%i, %s] : memref<?x?xf32>
    }
    scf.reduce
  }
  %view = memref.cast %y : memref<?x?xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %s = %c0 to %t step %c1 {
      %a = memref.load %y[%s, %i] : memref<?x?xf32>
      memref.store %a, %view[%s, %i] : memref<?x?xf32, strided<[?, 1], offset: ?>>
    }
    scf.reduce
  }
  return
}
