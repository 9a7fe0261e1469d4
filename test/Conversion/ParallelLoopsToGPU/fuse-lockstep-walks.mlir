// RUN: nerve-opt --nerve-fuse-kernel-loops --nerve-gpu-select-strategy --nerve-parallel-loops-to-gpu %s | FileCheck %s

// A neuron's forward (a thread per neuron walks time, storing h) and its
// backward (walking time back, reading h) over the same neurons become one
// kernel: a thread walks its neuron forward, then back, each walk in
// lockstep (a barrier ends each step), the forward's stores of h before the
// backward's loads of it. The scalar launch (the vector form, 4 neurons a
// thread, comes first) is checked.
// CHECK-LABEL: func.func @forward_then_back
// CHECK-SAME:    %[[X:[^:]*]]: memref<?x?xf32>, %[[GY:[^:]*]]: memref<?x?xf32>, %[[H:[^:]*]]: memref<?x?xf32>, %[[GX:[^:]*]]: memref<?x?xf32>
// CHECK:     } else {
// CHECK:       gpu.launch
// CHECK:         arith.minui
// CHECK:         %[[N:.*]] = arith.addi %c0,
// CHECK:         scf.for
// CHECK:           memref.load %[[X]][%{{.*}}, %[[N]]]
// CHECK:           memref.store %{{.*}}, %[[H]][%{{.*}}, %[[N]]]
// CHECK-NEXT:      gpu.barrier
// CHECK:         scf.for
// CHECK:           memref.load %[[H]][%{{.*}}, %[[N]]]
// CHECK:           memref.load %[[GY]][%{{.*}}, %[[N]]]
// CHECK:           memref.store %{{.*}}, %[[GX]][%{{.*}}, %[[N]]]
// CHECK-NEXT:      gpu.barrier
// CHECK:         gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK:     return
func.func @forward_then_back(%x: memref<?x?xf32>, %gy: memref<?x?xf32>, %h_seq: memref<?x?xf32>,
                             %gx: memref<?x?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %t = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = scf.for %s = %c0 to %t step %c1 iter_args(%v0 = %zero) -> (f32) {
      %a = memref.load %x[%s, %i] : memref<?x?xf32>
      %h = arith.addf %v0, %a : f32
      memref.store %h, %h_seq[%s, %i] : memref<?x?xf32>
      scf.yield %h : f32
    }
    scf.reduce
  }
  %last = arith.subi %t, %c1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %g = scf.for %k = %c0 to %t step %c1 iter_args(%g0 = %zero) -> (f32) {
      %s = arith.subi %last, %k : index
      %h = memref.load %h_seq[%s, %i] : memref<?x?xf32>
      %d = memref.load %gy[%s, %i] : memref<?x?xf32>
      %p = arith.mulf %h, %g0 : f32
      %g1 = arith.addf %p, %d : f32
      memref.store %g1, %gx[%s, %i] : memref<?x?xf32>
      scf.yield %g1 : f32
    }
    scf.reduce
  }
  return
}

// PLIF's shape: a buffer allocated between the walks (each neuron's
// parameter gradient), then a reduction of it. The forward moves past the
// allocation, the backward's reduction folds into the fused walk
// (fuse-reductions.mlir): two launches in all, the walk and the sum of
// the blocks' partials, and no temporary.
// CHECK-LABEL: func.func @forward_back_and_sum
// CHECK-NOT: memref.alloc
// CHECK:     gpu.launch
// CHECK:       scf.for
// CHECK:         memref.store
// CHECK-NEXT:    gpu.barrier
// CHECK:       scf.for
// CHECK:         memref.load
// CHECK:         memref.store
// CHECK:         gpu.barrier
// CHECK:       arith.select
// CHECK:     gpu.launch
// CHECK-NOT: gpu.launch
// CHECK:     return
func.func @forward_back_and_sum(%x: memref<?x?xf32>, %h_seq: memref<?x?xf32>, %gx: memref<?x?xf32>,
                                %out: memref<f32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %t = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = scf.for %s = %c0 to %t step %c1 iter_args(%v0 = %zero) -> (f32) {
      %a = memref.load %x[%s, %i] : memref<?x?xf32>
      %h = arith.addf %v0, %a : f32
      memref.store %h, %h_seq[%s, %i] : memref<?x?xf32>
      scf.yield %h : f32
    }
    scf.reduce
  }
  %tmp = memref.alloc(%n) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %sum = scf.for %s = %c0 to %t step %c1 iter_args(%acc = %zero) -> (f32) {
      %h = memref.load %h_seq[%s, %i] : memref<?x?xf32>
      memref.store %h, %gx[%s, %i] : memref<?x?xf32>
      %next = arith.addf %acc, %h : f32
      scf.yield %next : f32
    }
    memref.store %sum, %tmp[%i] : memref<?xf32>
    scf.reduce
  }
  %total = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    %v = memref.load %tmp[%i] : memref<?xf32>
    scf.reduce(%v : f32) {
    ^bb0(%l: f32, %r: f32):
      %s = arith.addf %l, %r : f32
      scf.reduce.return %s : f32
    }
  }
  memref.store %total, %out[] : memref<f32>
  memref.dealloc %tmp : memref<?xf32>
  return
}

// Not fused: the second walk reads a neighbour's h (another iteration's
// element); it stores into a buffer the first reads; it reads nothing the
// first stores; the walks cover different neurons. Each walk keeps its own
// launches, one by vectors of 4 neurons and one by scalars (a walk reading
// a neighbour has no vector form).
// CHECK-LABEL: func.func @reads_a_neighbour
// CHECK-COUNT-3: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK-LABEL: func.func @overwrites_an_input
// CHECK-COUNT-4: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK-LABEL: func.func @independent
// CHECK-COUNT-4: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK-LABEL: func.func @other_neurons
// CHECK-COUNT-4: gpu.launch
// CHECK-NOT: gpu.launch

// A column sum of what the walk stores stays a split reduction (its two
// launches, partials between them), after the walk's own launch.
// CHECK-LABEL: func.func @walk_then_column_sum
// CHECK:     gpu.launch
// CHECK:       gpu.barrier
// CHECK:     gpu.alloc
// CHECK:     gpu.launch
// CHECK:     gpu.launch
func.func @reads_a_neighbour(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %h_seq: memref<?x?xf32>,
    %gx: memref<?x?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  %m = arith.subi %n, %c1 : index
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %s = %c0 to %t step %c1 {
      %a = memref.load %x[%s, %i] : memref<?x?xf32>
      memref.store %a, %h_seq[%s, %i] : memref<?x?xf32>
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %s = %c0 to %t step %c1 {
      %j = arith.addi %i, %c1 : index
      %h = memref.load %h_seq[%s, %j] : memref<?x?xf32>
      memref.store %h, %gx[%s, %i] : memref<?x?xf32>
    }
    scf.reduce
  }
  return
}

func.func @overwrites_an_input(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %h_seq: memref<?x?xf32>,
    %gx: memref<?x?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  %m = arith.subi %n, %c1 : index
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %s = %c0 to %t step %c1 {
      %a = memref.load %x[%s, %i] : memref<?x?xf32>
      memref.store %a, %h_seq[%s, %i] : memref<?x?xf32>
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %s = %c0 to %t step %c1 {
      %h = memref.load %h_seq[%s, %i] : memref<?x?xf32>
      memref.store %h, %x[%s, %i] : memref<?x?xf32>
    }
    scf.reduce
  }
  return
}

func.func @independent(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %h_seq: memref<?x?xf32>,
    %gx: memref<?x?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  %m = arith.subi %n, %c1 : index
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %s = %c0 to %t step %c1 {
      %a = memref.load %x[%s, %i] : memref<?x?xf32>
      memref.store %a, %h_seq[%s, %i] : memref<?x?xf32>
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %s = %c0 to %t step %c1 {
      %a = memref.load %y[%s, %i] : memref<?x?xf32>
      memref.store %a, %gx[%s, %i] : memref<?x?xf32>
    }
    scf.reduce
  }
  return
}

func.func @other_neurons(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %h_seq: memref<?x?xf32>,
    %gx: memref<?x?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  %m = arith.subi %n, %c1 : index
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %s = %c0 to %t step %c1 {
      %a = memref.load %x[%s, %i] : memref<?x?xf32>
      memref.store %a, %h_seq[%s, %i] : memref<?x?xf32>
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %s = %c0 to %t step %c1 {
      %h = memref.load %h_seq[%s, %i] : memref<?x?xf32>
      memref.store %h, %gx[%s, %i] : memref<?x?xf32>
    }
    scf.reduce
  }
  return
}

func.func @walk_then_column_sum(%x: memref<?x?xf32>, %h_seq: memref<?x?xf32>, %sums: memref<?xf32>)
    attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %t = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %s = %c0 to %t step %c1 {
      %a = memref.load %x[%s, %i] : memref<?x?xf32>
      memref.store %a, %h_seq[%s, %i] : memref<?x?xf32>
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %sum = scf.for %s = %c0 to %t step %c1 iter_args(%acc = %zero) -> (f32) {
      %h = memref.load %h_seq[%s, %i] : memref<?x?xf32>
      %next = arith.addf %acc, %h : f32
      scf.yield %next : f32
    }
    memref.store %sum, %sums[%i] : memref<?xf32>
    scf.reduce
  }
  return
}
