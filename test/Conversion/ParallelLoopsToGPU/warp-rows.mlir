// RUN: nerve-opt %s --nerve-fuse-kernel-loops --nerve-gpu-select-strategy --nerve-parallel-loops-to-gpu --split-input-file | FileCheck %s

// A loop over rows that sums each row along its contiguous dimension. The
// host picks 16-byte vectors when the buffers allow them (else scalar
// loads), then by the rows' length: rows long enough that each of a
// 256-thread block's threads has a whole round of loads (four vectors of
// four, 4096 columns; four scalars, 1024) run a row per block, shorter
// ones a row per warp.
// CHECK-LABEL: func.func @row_sum
// CHECK:       scf.if %{{.*}} {
// CHECK:         %[[LONG:.*]] = arith.cmpi uge, %[[COLS:.*]], %c4096 : index
// CHECK:         scf.if %[[LONG]] {
// CHECK:           gpu.launch {{.*}} workgroup(%{{.*}} : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK-COUNT-4:     vector.load
// CHECK:             gpu.barrier
// CHECK:         } else {
// CHECK:           arith.ceildivui %{{.*}}, %c8 : index
// CHECK:           gpu.launch
// CHECK-COUNT-4:     vector.load
// CHECK-NOT:         gpu.barrier
// CHECK:       } else {
// CHECK:         %[[SLONG:.*]] = arith.cmpi uge, %[[COLS]], %c1024 : index
// CHECK:         scf.if %[[SLONG]] {
//
// A row per block: thread t folds elements t, t + 256, ... four at a time
// (four partials), then each warp combines by xor shuffles, lane 0 of each
// warp leaves the warp's total in shared memory, and after a barrier every
// thread combines the 8 totals in warp order; thread 0 writes. The second
// barrier lets the next row reuse the scratch.
// CHECK:           %[[GRID:.*]] = arith.ceildivui %{{.*}}, %c1{{.*}} : index
// CHECK:           gpu.launch blocks({{.*}}) in ({{.*}} = %{{.*}}, {{.*}}) threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %c256{{.*}} workgroup(%[[SCRATCH:.*]] : memref<8xf32, #gpu.address_space<workgroup>>) {
// CHECK:             %[[BLANE:.*]] = arith.remui %[[TID]], %c32 : index
// CHECK:             %[[BWARP:.*]] = arith.divui %[[TID]], %c32 : index
// CHECK:             %[[LANE0:.*]] = arith.cmpi eq, %[[BLANE]], %c0
// CHECK:             %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %c0
// CHECK:             scf.for %[[BROW:.*]] = {{.*}} {
// CHECK:               %{{.*}}:4 = scf.for {{.*}} -> (f32, f32, f32, f32) {
// CHECK-COUNT-4:         memref.load %{{.*}} : memref<?x?xf32>
// CHECK:                 scf.yield
// CHECK:               gpu.shuffle xor %{{.*}}, %c1_i32
// CHECK:               scf.if %[[LANE0]] {
// CHECK-NEXT:            memref.store %{{.*}}, %[[SCRATCH]][%[[BWARP]]]
// CHECK:               gpu.barrier
// CHECK:               memref.load %[[SCRATCH]][%c0
// CHECK:               scf.for %{{.*}} = %c1{{.*}} to %c8 step
// CHECK:                 memref.load %[[SCRATCH]]
// CHECK:               gpu.barrier
// CHECK:               scf.if %[[FIRST]] {
// CHECK-NEXT:            memref.store %{{.*}}, %{{.*}} : memref<?xf32>
// CHECK:         } else {
//
// A row per warp: 8 rows per 256-thread block, each lane folding every
// 32nd element four at a time (four partials, four loads in flight), then
// the tail one at a time, then a butterfly of xor shuffles; lane 0 writes.
// CHECK:           %[[WGRID:.*]] = arith.ceildivui %{{.*}}, %c8 : index
// CHECK:           gpu.launch blocks({{.*}}) in ({{.*}} = %{{.*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c256
// CHECK:             %[[LANE:.*]] = arith.remui %{{.*}}, %c32 : index
// CHECK:             %[[LEADER:.*]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK:             scf.for %{{.*}} = {{.*}} {
// CHECK:               %[[ROW:.*]] = arith.addi %c0, %{{.*}} : index
// CHECK:               %{{.*}}:4 = scf.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32) {
// CHECK-COUNT-4:         memref.load %{{.*}}[%[[ROW]], %{{.*}}] : memref<?x?xf32>
// CHECK:                 scf.yield
// CHECK:               scf.for {{.*}} -> (f32) {
// CHECK:               gpu.shuffle xor %{{.*}}, %c16_i32, %c32_i32 : f32
// CHECK:               gpu.shuffle xor %{{.*}}, %c8_i32
// CHECK:               gpu.shuffle xor %{{.*}}, %c4_i32
// CHECK:               gpu.shuffle xor %{{.*}}, %c2_i32
// CHECK:               gpu.shuffle xor %{{.*}}, %c1_i32
// CHECK-NOT:           gpu.barrier
// CHECK:               scf.if %[[LEADER]] {
// CHECK-NEXT:            memref.store %{{.*}}, %{{.*}}[%[[ROW]]] : memref<?xf32>
func.func @row_sum(%x: memref<?x?xf32>, %s: memref<?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %rows = memref.dim %x, %c0 : memref<?x?xf32>
  %cols = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%r) = (%c0) to (%rows) step (%c1) {
    %sum = scf.for %c = %c0 to %cols step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%r, %c] : memref<?x?xf32>
      %n = arith.addf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %sum, %s[%r] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// Rows of f16 (f32 arithmetic) whose buffers allow 16-byte vectors: each
// lane loads eight vectors of eight elements at once (eight partials),
// twice the vectors of f32 (measured faster on wide rows); the scalar launch,
// for misaligned buffers, keeps four loads in flight. A row takes a block
// from 256 x 8 x 8 = 16384 columns.
// CHECK-LABEL: func.func @row_sum_f16
// CHECK:       arith.cmpi uge, %{{.*}}, %c16384 : index
// CHECK:       gpu.launch
// CHECK:         scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-COUNT-8:   vector.load %{{.*}} {alignment = 16 : i64} : memref<?x?xf16>, vector<8xf16>
// CHECK-NOT:       vector.load
// CHECK:           scf.yield
// CHECK:         gpu.shuffle xor
// CHECK:       } else {
// CHECK:       gpu.launch
// CHECK:         scf.for {{.*}} -> (f32, f32, f32, f32) {
// CHECK-COUNT-4:   memref.load %{{.*}} : memref<?x?xf16>
// CHECK-NOT:       memref.load
// CHECK:           scf.yield
func.func @row_sum_f16(%x: memref<?x?xf16>, %s: memref<?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %rows = memref.dim %x, %c0 : memref<?x?xf16>
  %cols = memref.dim %x, %c1 : memref<?x?xf16>
  scf.parallel (%r) = (%c0) to (%rows) step (%c1) {
    %sum = scf.for %c = %c0 to %cols step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%r, %c] : memref<?x?xf16>
      %e = arith.extf %v : f16 to f32
      %n = arith.addf %acc, %e : f32
      scf.yield %n : f32
    }
    memref.store %sum, %s[%r] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// Reducing along the outer dimension (a column max), neighbouring lanes
// would read a row apart: a thread per column instead, whose neighbours
// read neighbouring addresses.
// CHECK-LABEL: func.func @column_max
// CHECK-NOT: gpu.shuffle
// CHECK: return
func.func @column_max(%x: memref<?x?xf32>, %m: memref<?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %init = arith.constant 0xFF800000 : f32
  %rows = memref.dim %x, %c0 : memref<?x?xf32>
  %cols = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%c) = (%c0) to (%cols) step (%c1) {
    %max = scf.for %r = %c0 to %rows step %c1 iter_args(%acc = %init) -> (f32) {
      %v = memref.load %x[%r, %c] : memref<?x?xf32>
      %n = arith.maximumf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %max, %m[%c] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// Rows known to be short (16 elements) keep a thread per row, and so does
// a fold whose partial results cannot be merged by shuffles (a product).
// CHECK-LABEL: func.func @short_rows
// CHECK-NOT: gpu.shuffle
// CHECK-LABEL: func.func @product
// CHECK-NOT: gpu.shuffle
// CHECK: return
func.func @short_rows(%x: memref<?x16xf32>, %s: memref<?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %rows = memref.dim %x, %c0 : memref<?x16xf32>
  scf.parallel (%r) = (%c0) to (%rows) step (%c1) {
    %sum = scf.for %c = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%r, %c] : memref<?x16xf32>
      %n = arith.addf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %sum, %s[%r] : memref<?xf32>
    scf.reduce
  }
  return
}
func.func @product(%x: memref<?x?xf32>, %s: memref<?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %rows = memref.dim %x, %c0 : memref<?x?xf32>
  %cols = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%r) = (%c0) to (%rows) step (%c1) {
    %p = scf.for %c = %c0 to %cols step %c1 iter_args(%acc = %one) -> (f32) {
      %v = memref.load %x[%r, %c] : memref<?x?xf32>
      %n = arith.mulf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %p, %s[%r] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// Rows of a static length take the launches of that length only: 8192
// columns a block per row (barriers), 512 a warp per row (none), each by
// vectors or by scalars.
// CHECK-LABEL: func.func @static_long_rows
// CHECK-NOT:   arith.cmpi uge
// CHECK:       gpu.launch
// CHECK:         vector.load
// CHECK:         gpu.barrier
// CHECK:       } else {
// CHECK:       gpu.launch
// CHECK-NOT:     vector.load
// CHECK:         gpu.barrier
// CHECK-LABEL: func.func @static_short_rows
// CHECK-NOT:   gpu.barrier
// CHECK:       gpu.launch
// CHECK:         vector.load
// CHECK:         gpu.shuffle
// CHECK:       } else {
// CHECK:       gpu.launch
// CHECK-NOT:     gpu.barrier
// CHECK:       return
func.func @static_long_rows(%x: memref<?x8192xf32>, %s: memref<?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cols = arith.constant 8192 : index
  %zero = arith.constant 0.0 : f32
  %rows = memref.dim %x, %c0 : memref<?x8192xf32>
  scf.parallel (%r) = (%c0) to (%rows) step (%c1) {
    %sum = scf.for %c = %c0 to %cols step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%r, %c] : memref<?x8192xf32>
      %n = arith.addf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %sum, %s[%r] : memref<?xf32>
    scf.reduce
  }
  return
}
func.func @static_short_rows(%x: memref<?x512xf32>, %s: memref<?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cols = arith.constant 512 : index
  %zero = arith.constant 0.0 : f32
  %rows = memref.dim %x, %c0 : memref<?x512xf32>
  scf.parallel (%r) = (%c0) to (%rows) step (%c1) {
    %sum = scf.for %c = %c0 to %cols step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%r, %c] : memref<?x512xf32>
      %n = arith.addf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %sum, %s[%r] : memref<?xf32>
    scf.reduce
  }
  return
}
