// RUN: nerve-opt --nerve-fuse-kernel-loops --nerve-gpu-select-strategy --nerve-parallel-loops-to-gpu %s | FileCheck %s

// Each iteration walks its own row in blocks of 4 columns (a time-minor
// neuron): the blocks are staged through shared memory, transposed. Two
// launches: by 16-byte vectors when the buffers allow them at run time
// (loaded by asynchronous copies), else by scalars. Each block: the
// threads load the tile rows together, barrier, each computes from its own row and writes its own row of the
// output tile, barrier, the threads store the tile rows together (rows
// past the last iteration are not stored).

// CHECK-LABEL: func.func @staged
// CHECK: memref.extract_strided_metadata %arg0
// CHECK: memref.extract_strided_metadata %arg1
// CHECK: scf.if
// CHECK: gpu.launch
// CHECK-SAME: threads({{.*}}) in ({{.*}} = %c256,
// CHECK-SAME: dynamic_shared_memory_size
// CHECK: gpu.dynamic_shared_memory
// CHECK: memref.view {{.*}} to memref<2048xf32, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<2048xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: scf.for {{.*}} step %c4 iter_args
// CHECK: nvgpu.device_async_copy %arg0[{{.*}}], {{.*}}, 4 {bypassL1} : memref<?x?xf32> to memref<2048xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: nvgpu.device_async_create_group
// CHECK-NEXT: nvgpu.device_async_wait
// CHECK-NEXT: gpu.barrier
// CHECK: vector.load {{.*}} : memref<2048xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-COUNT-4: arith.addf
// CHECK: vector.from_elements
// CHECK: vector.store {{.*}} : memref<2048xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NEXT: gpu.barrier
// CHECK: vector.load {{.*}} : memref<2048xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: scf.if
// CHECK-NEXT: vector.store {{.*}}, %arg1{{.*}} : memref<?x?xf32>, vector<4xf32>
// CHECK: } else {
// CHECK: gpu.launch
// CHECK: memref.view {{.*}} to memref<1280xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for {{.*}} step %c4 iter_args
// CHECK-COUNT-4: memref.load %arg0
// CHECK-COUNT-4: memref.store {{.*}} : memref<1280xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: memref.load %arg0
// CHECK-NOT: memref.store {{.*}}%arg1
// CHECK: gpu.barrier
// CHECK-COUNT-4: memref.store {{.*}}, %arg1
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @staged(%x: memref<?x?xf32>, %y: memref<?x?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %t = memref.dim %x, %c1 : memref<?x?xf32>
    %whole = arith.divui %t, %c4 : index
    %end = arith.muli %whole, %c4 : index
    %zero = arith.constant 0.0 : f32
    %last = scf.for %tb = %c0 to %end step %c4 iter_args(%acc = %zero) -> (f32) {
      %a = memref.load %x[%i, %tb] : memref<?x?xf32>
      %t1 = arith.addi %tb, %c1 : index
      %b = memref.load %x[%i, %t1] : memref<?x?xf32>
      %t2 = arith.addi %tb, %c2 : index
      %c = memref.load %x[%i, %t2] : memref<?x?xf32>
      %t3 = arith.addi %tb, %c3 : index
      %d = memref.load %x[%i, %t3] : memref<?x?xf32>
      %s0 = arith.addf %acc, %a : f32
      memref.store %s0, %y[%i, %tb] : memref<?x?xf32>
      %s1 = arith.addf %s0, %b : f32
      memref.store %s1, %y[%i, %t1] : memref<?x?xf32>
      %s2 = arith.addf %s1, %c : f32
      memref.store %s2, %y[%i, %t2] : memref<?x?xf32>
      %s3 = arith.addf %s2, %d : f32
      memref.store %s3, %y[%i, %t3] : memref<?x?xf32>
      scf.yield %s3 : f32
    }
    scf.reduce
  }
  return
}

// A block that loads all its steps first (as neuron walks do): each
// thread reads a vector of its own row where its first step is used, and
// writes a vector of its output row as soon as its last step is computed,
// so that a block's rows are not all held in registers at once.
// CHECK-LABEL: func.func @reads_at_first_use
// CHECK: gpu.launch
// CHECK-COUNT-2: nvgpu.device_async_copy
// CHECK-NEXT: nvgpu.device_async_create_group
// CHECK: gpu.barrier
// CHECK-NOT: vector.load
// CHECK: vector.load {{.*}} : memref<{{[0-9]+}}xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NOT: vector.load
// CHECK-COUNT-4: arith.mulf
// CHECK: vector.store {{.*}} : memref<{{[0-9]+}}xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NEXT: vector.load {{.*}} : memref<{{[0-9]+}}xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-COUNT-4: arith.mulf
// CHECK: vector.store {{.*}} : memref<{{[0-9]+}}xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NEXT: gpu.barrier
func.func @reads_at_first_use(%x: memref<?x?xf32>, %y: memref<?x?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %t = memref.dim %x, %c1 : memref<?x?xf32>
  %whole = arith.divui %t, %c8 : index
  %end = arith.muli %whole, %c8 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %tb = %c0 to %end step %c8 {
      %t1 = arith.addi %tb, %c1 : index
      %c2 = arith.constant 2 : index
      %t2 = arith.addi %tb, %c2 : index
      %c3 = arith.constant 3 : index
      %t3 = arith.addi %tb, %c3 : index
      %c4 = arith.constant 4 : index
      %t4 = arith.addi %tb, %c4 : index
      %c5 = arith.constant 5 : index
      %t5 = arith.addi %tb, %c5 : index
      %c6 = arith.constant 6 : index
      %t6 = arith.addi %tb, %c6 : index
      %c7 = arith.constant 7 : index
      %t7 = arith.addi %tb, %c7 : index
      %a0 = memref.load %x[%i, %tb] : memref<?x?xf32>
      %a1 = memref.load %x[%i, %t1] : memref<?x?xf32>
      %a2 = memref.load %x[%i, %t2] : memref<?x?xf32>
      %a3 = memref.load %x[%i, %t3] : memref<?x?xf32>
      %a4 = memref.load %x[%i, %t4] : memref<?x?xf32>
      %a5 = memref.load %x[%i, %t5] : memref<?x?xf32>
      %a6 = memref.load %x[%i, %t6] : memref<?x?xf32>
      %a7 = memref.load %x[%i, %t7] : memref<?x?xf32>
      %s0 = arith.mulf %a0, %a0 : f32
      memref.store %s0, %y[%i, %tb] : memref<?x?xf32>
      %s1 = arith.mulf %a1, %a1 : f32
      memref.store %s1, %y[%i, %t1] : memref<?x?xf32>
      %s2 = arith.mulf %a2, %a2 : f32
      memref.store %s2, %y[%i, %t2] : memref<?x?xf32>
      %s3 = arith.mulf %a3, %a3 : f32
      memref.store %s3, %y[%i, %t3] : memref<?x?xf32>
      %s4 = arith.mulf %a4, %a4 : f32
      memref.store %s4, %y[%i, %t4] : memref<?x?xf32>
      %s5 = arith.mulf %a5, %a5 : f32
      memref.store %s5, %y[%i, %t5] : memref<?x?xf32>
      %s6 = arith.mulf %a6, %a6 : f32
      memref.store %s6, %y[%i, %t6] : memref<?x?xf32>
      %s7 = arith.mulf %a7, %a7 : f32
      memref.store %s7, %y[%i, %t7] : memref<?x?xf32>
    }
    scf.reduce
  }
  return
}

// A block base that is not a multiple of the vector (steps of 3): scalars
// only, no run-time choice.
// CHECK-LABEL: func.func @odd_blocks
// CHECK-NOT: memref.extract_strided_metadata
// CHECK: gpu.launch
// CHECK: gpu.barrier
// CHECK-NOT: vector.
// CHECK: return
func.func @odd_blocks(%x: memref<?x?xf32>, %y: memref<?x?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %t = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %tb = %c0 to %t step %c3 {
      %a = memref.load %x[%i, %tb] : memref<?x?xf32>
      %t2 = arith.addi %tb, %c2 : index
      %b = memref.load %x[%i, %t2] : memref<?x?xf32>
      %s = arith.addf %a, %b : f32
      memref.store %s, %y[%i, %tb] : memref<?x?xf32>
      %t1 = arith.addi %tb, %c1 : index
      memref.store %a, %y[%i, %t1] : memref<?x?xf32>
      memref.store %b, %y[%i, %t2] : memref<?x?xf32>
    }
    scf.reduce
  }
  return
}

// Not staged, mapped a thread per iteration (no shared memory): a block
// that reads back what it writes, an output column written twice, a walk
// one step at a time, and a walk along the outer dimension (time-major:
// neighbouring iterations are already neighbours in memory; it walks in
// lockstep, see lockstep-loops.mlir).
// CHECK-LABEL: func.func @not_staged
// CHECK-NOT: gpu.dynamic_shared_memory
// CHECK: return
func.func @not_staged(%x: memref<?x?xf32>, %y: memref<?x?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %t = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %tb = %c0 to %t step %c2 {
      %a = memref.load %x[%i, %tb] : memref<?x?xf32>
      memref.store %a, %x[%i, %tb] : memref<?x?xf32>
      %t1 = arith.addi %tb, %c1 : index
      memref.store %a, %x[%i, %t1] : memref<?x?xf32>
    }
    scf.for %tb = %c0 to %t step %c2 {
      %a = memref.load %x[%i, %tb] : memref<?x?xf32>
      memref.store %a, %y[%i, %tb] : memref<?x?xf32>
      memref.store %a, %y[%i, %tb] : memref<?x?xf32>
    }
    scf.for %tb = %c0 to %t step %c1 {
      %a = memref.load %x[%i, %tb] : memref<?x?xf32>
      memref.store %a, %y[%i, %tb] : memref<?x?xf32>
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%t) step (%c1) {
    scf.for %tb = %c0 to %n step %c2 {
      %a = memref.load %x[%tb, %i] : memref<?x?xf32>
      %t1 = arith.addi %tb, %c1 : index
      memref.store %a, %y[%t1, %i] : memref<?x?xf32>
      memref.store %a, %y[%tb, %i] : memref<?x?xf32>
    }
    scf.reduce
  }
  return
}
