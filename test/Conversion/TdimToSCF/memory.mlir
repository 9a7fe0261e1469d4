// RUN: nerve-opt %s --convert-tdim-to-scf --cse --split-input-file | FileCheck %s

!m = !tdim.tensor<[r: ?, c: ?], f32>

// Loops: parallel -> scf.parallel, sequential -> scf.for with carried
// values, reverse -> a count-down scf.for. Loads and stores name dimensions
// in any order; the memref indices follow each tensor's layout.
// CHECK-LABEL: func.func @loops
// CHECK: scf.parallel (%[[R:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK:   %[[SUM:.*]] = scf.for %[[J:.*]] = %{{.*}} to %[[TRIP:.*]] step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32) {
// CHECK:     %[[LAST:.*]] = arith.subi %[[TRIP]], %{{.*}} : index
// CHECK:     %[[K:.*]] = arith.subi %[[LAST]], %[[J]] : index
// CHECK:     %[[MUL:.*]] = arith.muli %[[K]], %{{.*}} : index
// CHECK:     %[[C:.*]] = arith.addi %{{.*}}, %[[MUL]] : index
// CHECK:     %[[V:.*]] = memref.load %{{.*}}[%[[C]], %[[R]]] : memref<?x?xf32, strided<[1, ?]>>
// CHECK:     arith.addf %[[ACC]], %[[V]] : f32
// CHECK:     scf.yield
// CHECK:   memref.store %[[SUM]], %{{.*}}[%[[R]]] : memref<?xf32>
tdim.kernel @loops(%x: !tdim.tensor<[c: ?, r: ?], f32, strides = [1, ?]>) -> (%y: !tdim.tensor<[r: ?], f32>) {
  %r0 = tdim.const 0 : !tdim.index<r>
  %nr = tdim.size %x[r] : !tdim.tensor<[c: ?, r: ?], f32, strides = [1, ?]>
  %c0 = tdim.const 0 : !tdim.index<c>
  %nc = tdim.size %x[c] : !tdim.tensor<[c: ?, r: ?], f32, strides = [1, ?]>
  tdim.for %ri over r from %r0 to %nr parallel {
    %zero = arith.constant 0.0 : f32
    %sum = tdim.for %ci over c from %c0 to %nc step 2 reverse iter_args(%acc = %zero) -> (f32) {
      %v = tdim.load %x[r = %ri, c = %ci] : !tdim.tensor<[c: ?, r: ?], f32, strides = [1, ?]>
      %s = arith.addf %acc, %v : f32
      tdim.yield %s : f32
    }
    tdim.store %sum, %y[r = %ri] : !tdim.tensor<[r: ?], f32>
  }
  tdim.return
}

// -----

// An alloc becomes memref.alloc, freed before the kernel returns.
// CHECK-LABEL: func.func @alloc
// CHECK: %[[A:.*]] = memref.alloc(%{{.*}}) : memref<?x4xf16>
// CHECK: memref.dealloc %[[A]] : memref<?x4xf16>
// CHECK-NEXT: return
tdim.kernel @alloc(%x: !tdim.tensor<[n: ?], f32>) {
  %n = tdim.size %x[n] : !tdim.tensor<[n: ?], f32>
  %a = tdim.alloc(%n) : !tdim.tensor<[n: ?, k: 4], f16>
  tdim.return
}

// -----

// Views: slice and select are subviews, a reordering is a transpose. None
// copies.
// CHECK-LABEL: func.func @views
// CHECK: memref.subview %[[X:.*]][0, %{{.*}}] [%{{.*}}, 4] [1, 1] : memref<?x?xf32> to memref<?x4xf32, strided<[?, 1], offset: ?>>
// CHECK: memref.subview %[[X]][%{{.*}}, 0] [1, %{{.*}}] [1, 1] : memref<?x?xf32> to memref<?xf32, strided<[1], offset: ?>>
// CHECK: memref.transpose %[[X]] (d0, d1) -> (d1, d0) : memref<?x?xf32> to memref<?x?xf32, strided<[1, ?]>>
!m = !tdim.tensor<[r: ?, c: ?], f32>
tdim.kernel @views(%x: !m) {
  %c2 = tdim.const 2 : !tdim.index<c>
  %r1 = tdim.const 1 : !tdim.index<r>
  %s = tdim.slice %x along c from %c2 length 4 : !m
  %row = tdim.select %x[r = %r1] : !m
  %t = tdim.view %x as [c, r] : !m
  %i = tdim.const 0 : !tdim.index<r>
  %j = tdim.const 0 : !tdim.index<c>
  %v0 = tdim.load %s[r = %i, c = %j] : !tdim.tensor<[r: ?, c: 4], f32, strides = [?, 1], offset = ?>
  %v1 = tdim.load %row[c = %j] : !tdim.tensor<[c: ?], f32, offset = ?>
  %v2 = tdim.load %t[r = %i, c = %j] : !tdim.tensor<[c: ?, r: ?], f32, strides = [1, ?]>
  tdim.return
}
