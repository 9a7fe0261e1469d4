// RUN: nerve-opt %s --nerve-cpu-select-strategy='profile=vector=32,l1=32768' | FileCheck %s
// RUN: nerve-opt %s --nerve-cpu-select-strategy='profile=vector=64,l1=4096' | FileCheck %s --check-prefix=SMALL
// RUN: not nerve-opt %s --nerve-cpu-select-strategy='profile=vector=24,l1=1' 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: profile 'vector=24,l1=1' is not vector=16|32|64,l1=BYTES

// A neuron's time loop: chunks of neurons, sized so that the scratch (one
// f32 state a neuron: 4 bytes) takes at most half of L1, at most 1024.
// CHECK-LABEL: func.func @recurrence
// CHECK: scf.for
// CHECK: } {cpumap.strategy = #cpumap.strategy<time_chunks, chunk = 1024>}
// SMALL-LABEL: func.func @recurrence
// SMALL: } {cpumap.strategy = #cpumap.strategy<time_chunks, chunk = 512>}
func.func @recurrence(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %v0: memref<?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %t = memref.dim %x, %c0 : memref<?x?xf32>
    %init = memref.load %v0[%i] : memref<?xf32>
    %r = scf.for %s = %c0 to %t step %c1 iter_args(%v = %init) -> (f32) {
      %a = memref.load %x[%s, %i] : memref<?x?xf32>
      %b = arith.addf %v, %a : f32
      memref.store %b, %y[%s, %i] : memref<?x?xf32>
      scf.yield %b : f32
    }
    memref.store %r, %v0[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// Elementwise: threads; the inner parallel loop takes none.
// CHECK-LABEL: func.func @elementwise
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK-NOT: cpumap.strategy
// CHECK: }
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: } {cpumap.strategy = #cpumap.strategy<threads>}
func.func @elementwise(%x: memref<?x?xf32>, %y: memref<?x?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.parallel (%j) = (%c0) to (%n) step (%c1) {
      %a = memref.load %x[%i, %j] : memref<?x?xf32>
      %b = arith.mulf %a, %a : f32
      memref.store %b, %y[%i, %j] : memref<?x?xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// A whole reduction: blocks of 16 KiB of the widest element loaded (f64);
// its blocks' folds keep two vectors of f32 partials.
// CHECK-LABEL: func.func @whole_sum
// CHECK: } {cpumap.strategy = #cpumap.strategy<whole_reduction, chunk = 2048, lanes = 16>}
// SMALL-LABEL: func.func @whole_sum
// SMALL: } {cpumap.strategy = #cpumap.strategy<whole_reduction, chunk = 2048, lanes = 32>}
func.func @whole_sum(%x: memref<?xf64>, %out: memref<f64>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f64 {
    %a = memref.load %x[%i] : memref<?xf64>
    scf.reduce(%a : f64) {
    ^bb0(%l: f64, %r: f64):
      %s = arith.addf %l, %r : f64
      scf.reduce.return %s : f64
    }
  }
  memref.store %r, %out[] : memref<f64>
  return
}

// A row's fold is a recurrence along the rows: threads over rows, each
// row's fold split into lanes.
// CHECK-LABEL: func.func @row_sums
// CHECK: } {cpumap.strategy = #cpumap.strategy<threads, lanes = 16>}
func.func @row_sums(%x: memref<?x?xf32>, %out: memref<?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %n = memref.dim %x, %c1 : memref<?x?xf32>
    %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
      %a = memref.load %x[%i, %j] : memref<?x?xf32>
      %s = arith.addf %acc, %a : f32
      scf.yield %s : f32
    }
    memref.store %r, %out[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// A neuron whose time is the contiguous dimension walks its own rows:
// threads; its time loop is no fold (it stores), so no lanes.
// CHECK-LABEL: func.func @time_minor
// CHECK: } {cpumap.strategy = #cpumap.strategy<threads>}
func.func @time_minor(%x: memref<?x?xf32>, %y: memref<?x?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %t = memref.dim %x, %c1 : memref<?x?xf32>
    %r = scf.for %s = %c0 to %t step %c1 iter_args(%v = %zero) -> (f32) {
      %a = memref.load %x[%i, %s] : memref<?x?xf32>
      %b = arith.addf %v, %a : f32
      memref.store %b, %y[%i, %s] : memref<?x?xf32>
      scf.yield %b : f32
    }
    scf.reduce
  }
  return
}

// A reduction from a value that is no constant stays in order.
// CHECK-LABEL: func.func @seeded_sum
// CHECK: } {cpumap.strategy = #cpumap.strategy<sequential>}
func.func @seeded_sum(%x: memref<?xf32>, %seed: f32, %out: memref<f32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %r = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%seed) -> f32 {
    %a = memref.load %x[%i] : memref<?xf32>
    scf.reduce(%a : f32) {
    ^bb0(%l: f32, %r: f32):
      %s = arith.addf %l, %r : f32
      scf.reduce.return %s : f32
    }
  }
  memref.store %r, %out[] : memref<f32>
  return
}

// A strategy written by hand stays.
// CHECK-LABEL: func.func @forced
// CHECK: } {cpumap.strategy = #cpumap.strategy<sequential>}
func.func @forced(%y: memref<?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %y, %c0 : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %y[%i] : memref<?xf32>
    scf.reduce
  } {cpumap.strategy = #cpumap.strategy<sequential>}
  return
}
