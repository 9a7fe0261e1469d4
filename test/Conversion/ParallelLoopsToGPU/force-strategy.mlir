// RUN: nerve-opt %s --split-input-file --nerve-gpu-select-strategy --nerve-parallel-loops-to-gpu --verify-diagnostics | FileCheck %s

// A strategy written on a loop is the one it gets: nerve-gpu-select-strategy
// keeps it and nerve-parallel-loops-to-gpu applies it. A row sum that the
// table maps as row reductions (warp shuffles), forced onto threads: a
// thread per row folds its row alone.

// CHECK-LABEL: func.func @row_sum_by_threads
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK-NOT: gpu.shuffle
// CHECK: return
func.func @row_sum_by_threads(%x: memref<?x?xf32>, %s: memref<?xf32>) attributes {nerve.kernel} {
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
  } {gpumap.strategy = #gpumap.strategy<threads, block = 128>}
  return
}

// -----

// The same loop as row reductions of blocks of 64 threads (two warps).

// CHECK-LABEL: func.func @row_sum_by_warps
// CHECK-DAG: arith.constant 64 : index
// CHECK: gpu.launch
// CHECK: gpu.shuffle xor
func.func @row_sum_by_warps(%x: memref<?x?xf32>, %s: memref<?xf32>) attributes {nerve.kernel} {
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
  } {gpumap.strategy = #gpumap.strategy<row_reductions, block = 64>}
  return
}

// -----

// A strategy that does not take its loop is an error, not another mapping.
func.func @not_a_tiled_transpose(%x: memref<?x?xf32>, %s: memref<?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %rows = memref.dim %x, %c0 : memref<?x?xf32>
  %cols = memref.dim %x, %c1 : memref<?x?xf32>
  // expected-error @below {{does not have the shape strategy 'tiled_transpose' maps}}
  scf.parallel (%r) = (%c0) to (%rows) step (%c1) {
    %sum = scf.for %c = %c0 to %cols step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%r, %c] : memref<?x?xf32>
      %n = arith.addf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %sum, %s[%r] : memref<?xf32>
    scf.reduce
  } {gpumap.strategy = #gpumap.strategy<tiled_transpose, block = 256>}
  return
}

// -----

// A fold that uses what the device computes cannot be a whole fold.
func.func @not_a_whole_fold(%x: memref<?xf32>, %y: memref<f32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %init = memref.load %y[] : memref<f32>
  // expected-error @below {{does not fold as a whole at the kernel's top level (strategy 'whole_fold')}}
  %s = fold.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (f32) {
    %v = memref.load %x[%i] : memref<?xf32>
    %a = arith.addf %acc, %v : f32
    fold.yield %a : f32
  } merge {
  ^bb0(%l: f32, %r: f32):
    %m = arith.addf %l, %r : f32
    fold.yield %m : f32
  } attributes {gpumap.strategy = #gpumap.strategy<whole_fold, block = 256>}
  memref.store %s, %y[] : memref<f32>
  return
}

// -----

// A map the table gives 4 lanes (16-byte f32 vectors), forced to elements
// (lanes omitted: 0): no vector access, no host check of the buffers.

// CHECK-LABEL: func.func @map_by_elements
// CHECK-NOT: memref.extract_aligned_pointer_as_index
// CHECK-NOT: vector.load
// CHECK: gpu.launch
// CHECK-NOT: vector.load
// CHECK: return
func.func @map_by_elements(%x: memref<?xf32>, %y: memref<?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %y[%i] : memref<?xf32>
    scf.reduce
  } {gpumap.strategy = #gpumap.strategy<threads, block = 256>}
  return
}

// -----

// The same map by 4 lanes, as the table would choose; 8 lanes it cannot
// take (its vectors are 16 bytes of f32).

// CHECK-LABEL: func.func @map_by_four_lanes
// CHECK: gpu.launch
// CHECK: vector.load %{{.*}} : memref<?xf32>, vector<4xf32>
func.func @map_by_four_lanes(%x: memref<?xf32>, %y: memref<?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %y[%i] : memref<?xf32>
    scf.reduce
  } {gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>}
  return
}

// -----

func.func @map_by_eight_lanes(%x: memref<?xf32>, %y: memref<?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  // expected-error @below {{does not have the shape strategy 'threads' maps}}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %y[%i] : memref<?xf32>
    scf.reduce
  } {gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 8>}
  return
}
