// RUN: nerve-opt --nerve-fuse-kernel-loops --nerve-gpu-select-strategy --nerve-parallel-loops-to-gpu %s | FileCheck %s

// A neuron's backward with a parameter gradient, as convert-neuron-to-tdim
// gives it: a thread per neuron walks time, storing the neuron's sum over
// time in a temporary buffer, then a reduction adds the buffer up. The two
// become one reduction: no temporary, and its first kernel walks time in
// lockstep (a barrier ends each step), folds each thread's own iterations
// (a thread past the end repeats the last one without folding it) and
// combines the block's threads; the second kernel combines the blocks and
// stores the result.
// CHECK-LABEL: func.func @walk_then_sum
// CHECK-SAME:    %[[X:[^:]*]]: memref<?x?xf32>, %[[Y:[^:]*]]: memref<?x?xf32>, %[[OUT:[^:]*]]: memref<f32>
// CHECK-NOT: alloc
// CHECK:     %[[PARTIALS:.*]] = gpu.alloc (%{{.*}}) : memref<?xf32>
// CHECK-NOT: alloc
// CHECK:     gpu.launch
// CHECK:       %[[LAST:.*]] = arith.subi %[[TOTAL:.*]], %c1
// CHECK:       %[[PARTIAL:.*]] = scf.for %[[BASE:.*]] = %{{.*}} to %[[TOTAL]] step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32) {
// CHECK:         %[[MINE:.*]] = arith.addi %[[BASE]], %{{.*}}
// CHECK:         %[[OWN:.*]] = arith.cmpi ult, %[[MINE]], %[[TOTAL]]
// CHECK:         arith.minui %[[MINE]], %[[LAST]]
// CHECK:         %[[SUM:.*]] = scf.for
// CHECK:           memref.load %[[X]]
// CHECK:           memref.store %{{.*}}, %[[Y]]
// CHECK:           gpu.barrier
// CHECK-NEXT:      scf.yield
// CHECK:         %[[FOLDED:.*]] = arith.addf %[[ACC]], %[[SUM]] : f32
// CHECK:         %[[NEXT:.*]] = arith.select %[[OWN]], %[[FOLDED]], %[[ACC]] : f32
// CHECK:         scf.yield %[[NEXT]] : f32
// CHECK:       memref.store %[[PARTIAL]], %{{.*}}[%{{.*}}] : memref<256xf32, #gpu.address_space<workgroup>>
// CHECK:       memref.store %{{.*}}, %[[PARTIALS]][%{{.*}}]
// CHECK:     gpu.launch
// CHECK:       memref.load %[[PARTIALS]]
// CHECK:       memref.store %{{.*}}, %[[OUT]][]
// CHECK-NOT: gpu.launch
// CHECK:     gpu.dealloc %[[PARTIALS]]
// CHECK-NOT: dealloc
// CHECK:     return
func.func @walk_then_sum(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %out: memref<f32>)
    attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %t = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  %tmp = memref.alloc(%n) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %sum = scf.for %s = %c0 to %t step %c1 iter_args(%acc = %zero) -> (f32) {
      %a = memref.load %x[%s, %i] : memref<?x?xf32>
      %b = arith.mulf %a, %a : f32
      memref.store %b, %y[%s, %i] : memref<?x?xf32>
      %next = arith.addf %acc, %a : f32
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

// The same over 16-bit rows: the fused walk takes blocks of 128 threads,
// as a lockstep walk of 16-bit rows does (lockstep-loops.mlir), in both
// kernels.
// CHECK-LABEL: func.func @half_walk_then_sum
// CHECK:     gpu.launch
// CHECK-SAME:  threads({{.*}}) in ({{.*}} = %c128,
// CHECK:       gpu.barrier
// CHECK:       memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<128xf32, #gpu.address_space<workgroup>>
// CHECK:     gpu.launch
// CHECK-SAME:  threads({{.*}}) in ({{.*}} = %c128,
// CHECK-NOT: gpu.launch
// CHECK:     return
func.func @half_walk_then_sum(%x: memref<?x?xf16>, %y: memref<?x?xf16>, %out: memref<f32>)
    attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %t = memref.dim %x, %c0 : memref<?x?xf16>
  %n = memref.dim %x, %c1 : memref<?x?xf16>
  %tmp = memref.alloc(%n) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %sum = scf.for %s = %c0 to %t step %c1 iter_args(%acc = %zero) -> (f32) {
      %a = memref.load %x[%s, %i] : memref<?x?xf16>
      %b = arith.mulf %a, %a : f16
      memref.store %b, %y[%s, %i] : memref<?x?xf16>
      %w = arith.extf %a : f16 to f32
      %next = arith.addf %acc, %w : f32
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

// Not fused: a producer that walks nothing (it keeps its vector mapping),
// and a reduction that reads the buffer at other indices than the
// producer's. Their reductions still read the temporary.
// CHECK-LABEL: func.func @not_fused
// CHECK:     %[[TMP:.*]] = gpu.alloc
// CHECK:     vector.store %{{.*}}, %[[TMP]]
// CHECK:     gpu.launch
// CHECK:       memref.load %[[TMP]]
// CHECK:     gpu.launch
// CHECK:     gpu.launch
// CHECK:       scf.for
// CHECK:         memref.store %{{.*}}, %[[TMP]]
// CHECK:     gpu.launch
// CHECK:       memref.load %[[TMP]]
// CHECK:     return
func.func @not_fused(%x: memref<?x?xf32>, %out: memref<f32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %t = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  %tmp = memref.alloc(%n) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %a = memref.load %x[%c0, %i] : memref<?x?xf32>
    %b = arith.mulf %a, %a : f32
    memref.store %b, %tmp[%i] : memref<?xf32>
    scf.reduce
  }
  %first = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    %v = memref.load %tmp[%i] : memref<?xf32>
    scf.reduce(%v : f32) {
    ^bb0(%l: f32, %r: f32):
      %s = arith.addf %l, %r : f32
      scf.reduce.return %s : f32
    }
  }
  memref.store %first, %out[] : memref<f32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %sum = scf.for %s = %c0 to %t step %c1 iter_args(%acc = %zero) -> (f32) {
      %a = memref.load %x[%s, %i] : memref<?x?xf32>
      %next = arith.addf %acc, %a : f32
      scf.yield %next : f32
    }
    memref.store %sum, %tmp[%i] : memref<?xf32>
    scf.reduce
  }
  %second = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    %last = arith.subi %n, %c1 : index
    %j = arith.subi %last, %i : index
    %v = memref.load %tmp[%j] : memref<?xf32>
    scf.reduce(%v : f32) {
    ^bb0(%l: f32, %r: f32):
      %s = arith.addf %l, %r : f32
      scf.reduce.return %s : f32
    }
  }
  memref.store %second, %out[] : memref<f32>
  memref.dealloc %tmp : memref<?xf32>
  return
}
