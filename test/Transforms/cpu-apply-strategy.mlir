// RUN: nerve-opt %s --split-input-file --nerve-apply-cpu-strategy --canonicalize | FileCheck %s

// time_chunks: a task per 64 neurons; the carried state in scratch; the
// part before the time loop, the time loop around the chunk's neurons,
// the part after.
// CHECK-DAG: #[[GROUP0:.*]] = #llvm.access_group<id = distinct[0]<>>
// CHECK-DAG: #[[PAR0:.*]] = #llvm.loop_annotation<parallelAccesses = #[[GROUP0]]>
// CHECK-DAG: #[[GROUP1:.*]] = #llvm.access_group<id = distinct[1]<>>
// CHECK-DAG: #[[PAR1:.*]] = #llvm.loop_annotation<parallelAccesses = #[[GROUP1]]>
// A task takes 64 neurons, or the threads' share rounded up to 8 when
// that is fewer.
// CHECK-LABEL: func.func @recurrence
// CHECK-DAG:   %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG:   %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG:   %[[DIM:.*]] = memref.dim %{{.*}}, %c1
// CHECK:       %[[N:.*]] = arith.maxsi %[[DIM]], %c0
// CHECK:       %[[THREADS:.*]] = call @omp_get_max_threads() : () -> i32
// CHECK:       %[[T1:.*]] = arith.index_cast %[[THREADS]] : i32 to index
// CHECK:       %[[T2:.*]] = arith.maxui %[[T1]], %c1
// CHECK:       %[[SHARE:.*]] = arith.ceildivui %[[N]], %[[T2]]
// CHECK:       %[[EIGHTS:.*]] = arith.ceildivui %[[SHARE]], %[[C8]]
// CHECK:       %[[ROUNDED:.*]] = arith.muli %[[EIGHTS]], %[[C8]]
// CHECK:       %[[LEAST:.*]] = arith.maxui %[[ROUNDED]], %[[C8]]
// CHECK:       %[[SIZE:.*]] = arith.minui %[[LEAST]], %[[C64]]
// CHECK:       %[[CHUNKS:.*]] = arith.ceildivui %[[N]], %[[SIZE]]
// CHECK:       scf.parallel (%[[C:.*]]) = (%c0) to (%[[CHUNKS]]) step (%c1) {
// CHECK:         %[[T:.*]] = memref.dim %{{.*}}, %c0
// CHECK:         %[[BASE:.*]] = arith.muli %[[C]], %[[SIZE]]
// CHECK:         %[[LEFT:.*]] = arith.subi %[[N]], %[[BASE]]
// CHECK:         %[[LEN:.*]] = arith.minui %[[SIZE]], %[[LEFT]]
// CHECK:         %[[STATE:.*]] = memref.alloca() : memref<64xf32>
// CHECK:         scf.for %[[I:.*]] = %c0 to %[[LEN]] step %c1 {
// CHECK:           %[[INIT:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<?xf32>
// CHECK:           memref.store %[[INIT]], %[[STATE]][%[[I]]]
// CHECK:         } {llvm.loop_annotation = #[[PAR0]]}
// CHECK:         scf.for %[[S:.*]] = %c0 to %[[T]] step %c1 {
// CHECK:           scf.for %[[J:.*]] = %c0 to %[[LEN]] step %c1 {
// CHECK:             %[[NEURON:.*]] = arith.addi %[[BASE]], %[[J]]
// CHECK:             %[[V:.*]] = memref.load %[[STATE]][%[[J]]]
// CHECK:             %[[X:.*]] = memref.load %{{.*}}[%[[S]], %[[NEURON]]]
// CHECK:             %[[SUM:.*]] = arith.addf %[[V]], %[[X]]
// CHECK:             memref.store %[[SUM]], %{{.*}}[%[[S]], %[[NEURON]]]
// CHECK:             memref.store %[[SUM]], %[[STATE]][%[[J]]]
// CHECK:           } {llvm.loop_annotation = #[[PAR1]]}
// CHECK-NOT:       llvm.loop_annotation
// CHECK:         }
// CHECK:         scf.for %[[K:.*]] = %c0 to %[[LEN]] step %c1 {
// CHECK:           %[[LAST:.*]] = memref.load %[[STATE]][%[[K]]]
// CHECK:           memref.store %[[LAST]], %{{.*}}[%{{.*}}] : memref<?xf32>
// CHECK-NOT:   scf.parallel
// CHECK:       func.func private @omp_get_max_threads() -> i32
func.func @recurrence(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %v0: memref<?xf32>) {
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
  } {cpumap.strategy = #cpumap.strategy<time_chunks, chunk = 64>}
  return
}

// -----

// A value made before the time loop and read inside it crosses in scratch
// too; the outer dimension stays parallel beside the chunks.
// CHECK-LABEL: func.func @crossing
// CHECK:       scf.parallel (%[[B:.*]], %[[C:.*]]) = (%c0, %c0) to (%{{.*}}, %{{.*}}) step (%c1, %c1) {
// CHECK-DAG:     %[[SCALE:.*]] = memref.alloca() : memref<8xf32>
// CHECK-DAG:     %[[STATE:.*]] = memref.alloca() : memref<8xf32>
// CHECK:         scf.for
// CHECK:           %[[W:.*]] = memref.load %{{.*}}[%[[B]], %{{.*}}] : memref<?x?xf32>
// CHECK:           memref.store %[[W]], %[[SCALE]]
// CHECK:         scf.for
// CHECK:           scf.for %[[J:.*]] =
// CHECK-DAG:         memref.load %[[SCALE]][%[[J]]]
// CHECK-DAG:         memref.load %[[STATE]][%[[J]]]
// CHECK:             arith.mulf
func.func @crossing(%w: memref<?x?xf32>, %out: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %b = memref.dim %w, %c0 : memref<?x?xf32>
  %n = memref.dim %w, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%b, %n) step (%c1, %c1) {
    %scale = memref.load %w[%i, %j] : memref<?x?xf32>
    %r = scf.for %s = %c0 to %c16 step %c1 iter_args(%v = %zero) -> (f32) {
      %p = arith.mulf %v, %scale : f32
      scf.yield %p : f32
    }
    memref.store %r, %out[%i, %j] : memref<?x?xf32>
    scf.reduce
  } {cpumap.strategy = #cpumap.strategy<time_chunks, chunk = 8>}
  return
}

// -----

// threads: the outer dimension in parallel, the inner ones in order; an
// inner parallel loop becomes a loop too.
// CHECK-LABEL: func.func @threads
// CHECK:       scf.parallel (%[[I:.*]]) =
// CHECK-NEXT:    scf.for %[[J:.*]] =
// CHECK-NEXT:      scf.for %[[K:.*]] =
// CHECK-NEXT:        memref.load %{{.*}}[%[[I]], %[[J]], %[[K]]]
// CHECK-NEXT:        memref.store
// CHECK-NEXT:      } {llvm.loop_annotation = #{{.*}}}
// CHECK-NEXT:    } {llvm.loop_annotation = #{{.*}}}
// CHECK-NOT:   cpumap
func.func @threads(%x: memref<?x?x?xf32>, %y: memref<?x?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %a = memref.dim %x, %c0 : memref<?x?x?xf32>
  %b = memref.dim %x, %c1 : memref<?x?x?xf32>
  %c = memref.dim %x, %c2 : memref<?x?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%a, %b) step (%c1, %c1) {
    scf.parallel (%k) = (%c0) to (%c) step (%c1) {
      %v = memref.load %x[%i, %j, %k] : memref<?x?x?xf32>
      memref.store %v, %y[%i, %j, %k] : memref<?x?x?xf32>
      scf.reduce
    }
    scf.reduce
  } {cpumap.strategy = #cpumap.strategy<threads>}
  return
}

// -----

// whole_reduction over rows: a block takes whole rows, at least 1000
// elements; partials in a buffer, combined in order after the tasks.
// CHECK-LABEL: func.func @matrix_max
// CHECK-DAG:   %[[INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG:   %[[DIM0:.*]] = memref.dim %{{.*}}, %c0
// CHECK-DAG:   %[[COLS:.*]] = memref.dim %{{.*}}, %c1
// CHECK:       %[[PER:.*]] = arith.ceildivui %c1000, %{{.*}}
// CHECK:       %[[ROWS:.*]] = arith.maxsi %[[DIM0]], %c0
// CHECK:       %[[BLOCKS:.*]] = arith.ceildivui %[[ROWS]], %[[PER]]
// CHECK:       %[[PARTIALS:.*]] = memref.alloc(%[[BLOCKS]]) : memref<?xf32>
// CHECK:       scf.parallel (%[[P:.*]]) = (%c0) to (%[[BLOCKS]]) step (%c1) {
// CHECK:         %[[ACC:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[INF]]) -> (f32) {
// CHECK:           scf.for {{.*}} -> (f32) {
// CHECK:             arith.maximumf
// CHECK-NOT:       llvm.loop_annotation
// CHECK:         memref.store %[[ACC]], %[[PARTIALS]][%[[P]]]
// CHECK:       %[[ALL:.*]] = scf.for %[[Q:.*]] = %c0 to %[[BLOCKS]] step %c1 iter_args(%[[R:.*]] = %[[INF]]) -> (f32) {
// CHECK:         %[[PART:.*]] = memref.load %[[PARTIALS]][%[[Q]]]
// CHECK:         arith.maximumf %[[R]], %[[PART]]
// CHECK:       memref.dealloc %[[PARTIALS]]
// CHECK:       memref.store %[[ALL]]
func.func @matrix_max(%x: memref<?x?xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  %r = scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) init (%ninf) -> f32 {
    %a = memref.load %x[%i, %j] : memref<?x?xf32>
    scf.reduce(%a : f32) {
    ^bb0(%l: f32, %q: f32):
      %s = arith.maximumf %l, %q : f32
      scf.reduce.return %s : f32
    }
  } {cpumap.strategy = #cpumap.strategy<whole_reduction, chunk = 1000>}
  memref.store %r, %out[] : memref<f32>
  return
}

// -----

// sequential: no parallel loop is left.
// CHECK-LABEL: func.func @sequential
// CHECK-NOT:   scf.parallel
// CHECK:       scf.for
func.func @sequential(%y: memref<?xf32>) {
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

// -----

// lanes: a row's fold keeps 4 partials (scratch allocated once per task,
// filled with the neutral element each time the fold runs), iteration j
// going to partial j mod 4 in a loop declared parallel and kept a loop;
// then the initial value, the partials in order and the iterations past
// the last group of 4.
// CHECK-DAG:   #[[NOUNROLL:.*]] = #llvm.loop_unroll<disable = true>
// CHECK-DAG:   #[[LANES:.*]] = #llvm.loop_annotation<unroll = #[[NOUNROLL]], parallelAccesses = #{{.*}}>
// CHECK-LABEL: func.func @row_max
// CHECK-DAG:   %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:   %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG:   %[[SEED:.*]] = arith.constant -1.000000e+00 : f32
// CHECK:       scf.parallel (%[[ROW:.*]]) =
// CHECK-NEXT:    %[[PARTIALS:.*]] = memref.alloca() : memref<4xf32>
// CHECK:         %[[COLS:.*]] = memref.dim
// CHECK:         %[[COUNT:.*]] = arith.maxsi %[[COLS]], %c0
// CHECK:         %[[GROUPS:.*]] = arith.divui %[[COUNT]], %[[C4]]
// CHECK:         %[[FULL:.*]] = arith.muli %[[GROUPS]], %[[C4]]
// CHECK:         scf.for %[[K:.*]] = %c0 to %[[C4]] step %c1 {
// CHECK-NEXT:      memref.store %[[NEG]], %[[PARTIALS]][%[[K]]]
// CHECK:         scf.for %[[G:.*]] = %c0 to %[[FULL]] step %[[C4]] {
// CHECK-NEXT:      scf.for %[[L:.*]] = %c0 to %[[C4]] step %c1 {
// CHECK-NEXT:        %[[J:.*]] = arith.addi %[[G]], %[[L]]
// CHECK-NEXT:        %[[X:.*]] = memref.load %{{.*}}[%[[ROW]], %[[J]]]
// CHECK-NEXT:        %[[P:.*]] = memref.load %[[PARTIALS]][%[[L]]]
// CHECK-NEXT:        %[[M:.*]] = arith.maximumf %[[P]], %[[X]]
// CHECK-NEXT:        memref.store %[[M]], %[[PARTIALS]][%[[L]]]
// CHECK-NEXT:      } {llvm.loop_annotation = #[[LANES]]}
// CHECK:         %[[GATHERED:.*]] = scf.for %[[Q:.*]] = %c0 to %[[C4]] step %c1 iter_args(%[[A:.*]] = %[[SEED]]) -> (f32) {
// CHECK-NEXT:      %[[PQ:.*]] = memref.load %[[PARTIALS]][%[[Q]]]
// CHECK-NEXT:      arith.maximumf %[[A]], %[[PQ]]
// CHECK:         %[[ALL:.*]] = scf.for %[[R:.*]] = %[[FULL]] to %[[COUNT]] step %c1 iter_args(%[[B:.*]] = %[[GATHERED]]) -> (f32) {
// CHECK:         memref.store %[[ALL]], %{{.*}}[%[[ROW]]]
func.func @row_max(%x: memref<?x?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %seed = arith.constant -1.0 : f32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %n = memref.dim %x, %c1 : memref<?x?xf32>
    %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %seed) -> (f32) {
      %a = memref.load %x[%i, %j] : memref<?x?xf32>
      %s = arith.maximumf %acc, %a : f32
      scf.yield %s : f32
    }
    memref.store %r, %out[%i] : memref<?xf32>
    scf.reduce
  } {cpumap.strategy = #cpumap.strategy<threads, lanes = 4>}
  return
}

// -----

// A fold that writes memory keeps its order.
// CHECK-LABEL: func.func @fold_that_stores
// CHECK-NOT:   memref.alloca
// CHECK:       scf.for {{.*}} iter_args
func.func @fold_that_stores(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %n = memref.dim %x, %c1 : memref<?x?xf32>
    %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
      %a = memref.load %x[%i, %j] : memref<?x?xf32>
      memref.store %a, %y[%i, %j] : memref<?x?xf32>
      %s = arith.addf %acc, %a : f32
      scf.yield %s : f32
    }
    memref.store %r, %out[%i] : memref<?xf32>
    scf.reduce
  } {cpumap.strategy = #cpumap.strategy<threads, lanes = 4>}
  return
}

// -----

// loops = 2: a row's maximum and the pass that reads it run in the same
// tasks, row by row; the allocation between them moves before (and,
// unused, goes).
// CHECK-LABEL: func.func @row_group
// CHECK:       %[[MAX:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK-NEXT:  scf.parallel (%[[ROW:.*]]) =
// CHECK:         %[[M:.*]] = scf.for {{.*}} -> (f32)
// CHECK:         memref.store %[[M]], %[[MAX]][%[[ROW]]]
// CHECK:         scf.for %[[COL:.*]] =
// CHECK:           memref.load %[[MAX]][%[[ROW]]]
// CHECK:           memref.store %{{.*}}, %{{.*}}[%[[ROW]], %[[COL]]]
// CHECK:         } {llvm.loop_annotation
// CHECK:         scf.reduce
// CHECK-NOT:   scf.parallel
func.func @row_group(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  %max = memref.alloc(%m) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %ninf) -> (f32) {
      %a = memref.load %x[%i, %j] : memref<?x?xf32>
      %s = arith.maximumf %acc, %a : f32
      scf.yield %s : f32
    }
    memref.store %r, %max[%i] : memref<?xf32>
    scf.reduce
  } {cpumap.strategy = #cpumap.strategy<threads, loops = 2>}
  %other = memref.alloc(%m) : memref<?xf32>
  // The second loop's columns as a loop of their own: they too run in order.
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.parallel (%j) = (%c0) to (%n) step (%c1) {
      %a = memref.load %x[%i, %j] : memref<?x?xf32>
      %b = memref.load %max[%i] : memref<?xf32>
      %d = arith.subf %a, %b : f32
      memref.store %d, %y[%i, %j] : memref<?x?xf32>
      scf.reduce
    }
    scf.reduce
  }
  memref.dealloc %max : memref<?xf32>
  memref.dealloc %other : memref<?xf32>
  return
}
