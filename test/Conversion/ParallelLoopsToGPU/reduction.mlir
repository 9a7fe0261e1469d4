// RUN: nerve-opt %s --nerve-parallel-loops-to-gpu | FileCheck %s

// A parallel loop with a reduction becomes two launches: up to 1024 blocks
// of 256 threads each fold their grid-stride share in order and combine
// their threads pairwise in workgroup memory (a fixed tree), then one block
// does the same over the blocks' partial values. A result stored right
// after the loop is stored by that block; the buffers are freed at the end.
// CHECK-LABEL: func.func @sum
// CHECK-SAME:    %[[OUT:[^:]*]]: memref<f32>
// CHECK:     memref.dim
// CHECK:     %[[BLOCKS:.*]] = arith.minui %{{.*}}, %c1024 : index
// CHECK:     %[[PARTIALS:.*]] = gpu.alloc (%[[BLOCKS]]) : memref<?xf32>
// CHECK-NOT: gpu.alloc
// CHECK:     gpu.launch blocks(%[[BID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[BLOCKS]], {{.*}} workgroup(%[[SHM:.*]] : memref<256xf32, #gpu.address_space<workgroup>>) {
// CHECK:       %[[ACC:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %{{.*}}) -> (f32) {
// CHECK:         %[[V:.*]] = memref.load
// CHECK:         %[[S:.*]] = arith.addf %[[A]], %[[V]] : f32
// CHECK:         scf.yield %[[S]] : f32
// CHECK:       memref.store %[[ACC]], %[[SHM]][%[[TID:.*]]]
// CHECK:       gpu.barrier
// CHECK:       arith.cmpi ult, %[[TID]], %c128
// CHECK:       scf.if
// CHECK:         arith.addf
// CHECK-COUNT-8: gpu.barrier
// CHECK:       scf.if
// CHECK:         memref.store %{{.*}}, %[[PARTIALS]][%[[BID]]]
// CHECK:     gpu.launch {{.*}} workgroup(%{{.*}} : memref<256xf32, #gpu.address_space<workgroup>>) {
// CHECK:       scf.for %{{.*}} = %{{.*}} to %[[BLOCKS]] step %{{.*}} iter_args
// CHECK:         memref.load %[[PARTIALS]]
// CHECK:         memref.store %{{.*}}, %[[OUT]][]
// CHECK-NOT: gpu.launch
// CHECK:     gpu.dealloc %[[PARTIALS]]
// CHECK-NOT: gpu.dealloc
// CHECK:     return
func.func @sum(%x: memref<?xf32>, %out: memref<f32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?xf32>
  %sum = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    %v = memref.load %x[%i] : memref<?xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  memref.store %sum, %out[] : memref<f32>
  return
}

// A result used otherwise goes to a buffer of its own, read back where the
// loop stood (here by a one-thread launch that scales and stores it).
// CHECK-LABEL: func.func @scaled_sum
// CHECK-SAME:    %[[OUT:[^:]*]]: memref<f32>
// CHECK:     %[[PARTIALS:.*]] = gpu.alloc (%{{.*}}) : memref<?xf32>
// CHECK:     %[[RESULT:.*]] = gpu.alloc () : memref<f32>
// CHECK:     gpu.launch
// CHECK:     gpu.launch
// CHECK:         memref.store %{{.*}}, %[[RESULT]][]
// CHECK:     gpu.launch
// CHECK:       %[[R:.*]] = memref.load %[[RESULT]][]
// CHECK:       %[[H:.*]] = arith.mulf %[[R]], %{{.*}} : f32
// CHECK:       memref.store %[[H]], %[[OUT]][]
// CHECK:     gpu.dealloc %[[PARTIALS]]
// CHECK:     gpu.dealloc %[[RESULT]]
// CHECK:     return
func.func @scaled_sum(%x: memref<?xf32>, %out: memref<f32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %n = memref.dim %x, %c0 : memref<?xf32>
  %sum = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    %v = memref.load %x[%i] : memref<?xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  %h = arith.mulf %sum, %half : f32
  memref.store %h, %out[] : memref<f32>
  return
}
