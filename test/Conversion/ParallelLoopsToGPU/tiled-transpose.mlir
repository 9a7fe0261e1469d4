// RUN: nerve-opt %s --nerve-fuse-kernel-loops --nerve-gpu-select-strategy --nerve-parallel-loops-to-gpu --split-input-file | FileCheck %s

// y[r, c] (contiguous along c) from a column-major x[r, c] (contiguous
// along r). Fewer than 16 rows keep the usual mapping (the copy in the
// last else branch). Otherwise, in tiles, by one of two forms that a host
// check of x picks.
//
// By 16-byte chunks (x read through a transposed view, contiguous along
// its last dimension): 64 x 64 tiles of f32, 512 threads a block, two
// chunks each, copied asynchronously into a ring of three shared tiles
// (48 KiB). A block takes a contiguous range of tiles: it copies its
// first two (a group each; an empty group past its range), then in a loop
// over its tiles waits until at most one group is in flight, meets at a
// barrier, copies the tile two ahead into the stage the previous tile
// left, and computes from the shared tile's chunks with threads
// consecutive along c (four iterations a chunk). The loop carries the
// stage, the newest group and the two tiles' coordinates, advanced with a
// carry: no division in the loop. A tile wholly inside the bounds stores
// unguarded; one at the edge stores only where the chunk and the column
// exist. s[r] (a value per row) is read directly.
// CHECK-LABEL: func.func @transposed
// CHECK:       %[[TALL:.*]] = arith.cmpi uge, %{{.*}}, %c16{{.*}} : index
// CHECK:       scf.if %[[TALL]] {
// CHECK:         %[[VIEW:.*]] = memref.transpose %arg0 (d0, d1) -> (d1, d0) : memref<?x?xf32, strided<[1, ?]>> to memref<?x?xf32, strided<[?, 1]>>
// CHECK:         gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c512{{.*}}, {{.*}}) dynamic_shared_memory_size %c49152_i32
// CHECK:           %[[VTILE:.*]] = memref.view {{.*}} to memref<12288xf32, #gpu.address_space<workgroup>>
// CHECK:           scf.if %{{.*}} -> (!nvgpu.device.async.token) {
// CHECK-COUNT-2:     nvgpu.device_async_copy %[[VIEW]][%{{.*}}, %{{.*}}], %[[VTILE]][%{{.*}}], 4 {bypassL1}
// CHECK:             nvgpu.device_async_create_group %{{.*}}, %{{.*}}
// CHECK:           } else {
// CHECK-NEXT:        nvgpu.device_async_create_group{{ *$}}
// CHECK:           scf.if %{{.*}} -> (!nvgpu.device.async.token) {
// CHECK-COUNT-2:     nvgpu.device_async_copy %[[VIEW]]
// CHECK:           scf.for {{.*}} iter_args({{.*}}) -> (index, !nvgpu.device.async.token, index, index, index, index) {
// CHECK-NEXT:        nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// CHECK-NEXT:        gpu.barrier
// CHECK-NOT:         arith.divui
// CHECK:             %[[ISSUED:.*]] = scf.if %{{.*}} -> (!nvgpu.device.async.token) {
// CHECK-COUNT-2:       nvgpu.device_async_copy %[[VIEW]]
// CHECK-NOT:         arith.divui
// CHECK:             scf.if %{{.*}} {
// CHECK-NOT:           arith.minui
// CHECK:               vector.load %[[VTILE]]
// CHECK-COUNT-4:       vector.extract
// CHECK:               vector.load %[[VTILE]]
// CHECK-COUNT-4:       vector.extract
// CHECK-COUNT-8:       memref.load %arg1[%{{.*}}] : memref<?xf32>
// CHECK-COUNT-8:       math.exp
// CHECK-COUNT-8:       arith.divf
// CHECK-NOT:           scf.if
// CHECK-COUNT-8:       memref.store %{{.*}}, %arg2[%{{.*}}, %{{.*}}] : memref<?x?xf32>
// CHECK-NEXT:        } else {
// CHECK:               arith.minui
// CHECK-COUNT-8:       math.exp
// CHECK:               scf.if %{{.*}} {
// CHECK-NEXT:            memref.store %{{.*}}, %arg2[%{{.*}}, %{{.*}}] : memref<?x?xf32>
// CHECK-NOT:         arith.divui
// CHECK-NOT:         gpu.barrier
// CHECK:             scf.yield %{{.*}}, %[[ISSUED]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : index, !nvgpu.device.async.token, index, index, index, index
//
// By elements: 32 x 32 tiles of f32, a block of 256 threads each, a
// contiguous range of tiles a block (coordinates carried, no division in
// the loop), one at a time. The block loads x's tile with threads
// consecutive along r into shared memory (rows padded to 33), meets at a
// barrier, computes with threads consecutive along c (four iterations
// each), x read from the tile transposed, and meets again before the next
// tile. A tile wholly inside the bounds does
// so with no clamps and no guards; one at the edge clamps its loads to the
// last iteration and stores only where the iteration exists.
// CHECK:         } else {
// CHECK:           gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c256{{.*}}, {{.*}}) dynamic_shared_memory_size %c4224_i32
// CHECK:           %[[TILE:.*]] = memref.view {{.*}} to memref<1056xf32, #gpu.address_space<workgroup>>
// CHECK:           scf.for {{.*}} iter_args({{.*}}) -> (index, index) {
// CHECK-NOT:         arith.divui
// CHECK:             %[[PFITS:.*]] = arith.cmpi ule, %{{.*}}, %{{.*}} : index
// CHECK:             %[[QFITS:.*]] = arith.cmpi ule, %{{.*}}, %{{.*}} : index
// CHECK:             %[[WHOLE:.*]] = arith.andi %[[PFITS]], %[[QFITS]] : i1
// CHECK:             scf.if %[[WHOLE]] {
// CHECK-NOT:           arith.select
// CHECK-COUNT-4:       memref.load %arg0[%{{.*}}, %{{.*}}] : memref<?x?xf32, strided<[1, ?]>>
// CHECK-COUNT-4:       memref.store %{{.*}}, %[[TILE]][%{{.*}}] : memref<1056xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT:          gpu.barrier
// CHECK-NOT:           arith.select
// CHECK-COUNT-4:       memref.load %[[TILE]][%{{.*}}]
// CHECK-COUNT-4:       memref.load %arg1[%{{.*}}] : memref<?xf32>
// CHECK-COUNT-4:       math.exp
// CHECK-COUNT-4:       arith.divf
// CHECK-NOT:           scf.if
// CHECK-COUNT-4:       memref.store %{{.*}}, %arg2[%{{.*}}, %{{.*}}] : memref<?x?xf32>
// CHECK-NEXT:          gpu.barrier
// CHECK-NEXT:        } else {
// CHECK:               arith.select
// CHECK-COUNT-4:       memref.load %arg0[%{{.*}}, %{{.*}}] : memref<?x?xf32, strided<[1, ?]>>
// CHECK-COUNT-4:       memref.store %{{.*}}, %[[TILE]][%{{.*}}] : memref<1056xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT:          gpu.barrier
// CHECK-COUNT-4:       memref.load %[[TILE]][%{{.*}}]
// CHECK-COUNT-4:       memref.load %arg1[%{{.*}}] : memref<?xf32>
// CHECK-COUNT-4:       math.exp
// CHECK-COUNT-4:       arith.divf
// CHECK:               scf.if %{{.*}} {
// CHECK-NEXT:            memref.store %{{.*}}, %arg2[%{{.*}}, %{{.*}}] : memref<?x?xf32>
// CHECK:               gpu.barrier
// CHECK-NEXT:        }
// CHECK-NOT:         arith.divui
// CHECK:             scf.yield %{{.*}}, %{{.*}} : index, index
// CHECK:       } else {
// CHECK-NOT:     dynamic_shared_memory
// CHECK:         gpu.launch
// CHECK-NOT:       gpu.barrier
// CHECK:       return
func.func @transposed(%x: memref<?x?xf32, strided<[1, ?]>>, %s: memref<?xf32>,
                      %y: memref<?x?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %y, %c0 : memref<?x?xf32>
  %cols = memref.dim %y, %c1 : memref<?x?xf32>
  scf.parallel (%r, %c) = (%c0, %c0) to (%rows, %cols) step (%c1, %c1) {
    %v = memref.load %x[%r, %c] : memref<?x?xf32, strided<[1, ?]>>
    %w = memref.load %s[%r] : memref<?xf32>
    %e = math.exp %v : f32
    %d = arith.divf %e, %w : f32
    memref.store %d, %y[%r, %c] : memref<?x?xf32>
    scf.reduce
  }
  return
}

// -----

// f16: by 16-byte chunks, 64 x 64 tiles (128 bytes a side), 128 threads
// with four chunks of eight each, a ring of three tiles (24 KiB); by
// elements, 64 x 64 tiles too, 256 threads, rows padded by two elements
// (4 bytes), sixteen iterations a thread. Enough
// rows known statically: no fallback. s[r] (a value per row, contiguous
// along r, f32) is read one vector of eight a chunk in the chunk form (its
// buffer in the host check), by elements in the other; in f32 (four
// lanes, @transposed above) by elements in both.
// CHECK-LABEL: func.func @transposed_f16
// CHECK-NOT:   arith.cmpi uge
// CHECK:       memref.extract_aligned_pointer_as_index %arg1
// CHECK:       gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c128{{.*}}, {{.*}}) dynamic_shared_memory_size %c24576_i32
// CHECK:         memref.view {{.*}} to memref<12288xf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-4: nvgpu.device_async_copy {{.*}}, 8 {bypassL1}
// CHECK:         gpu.barrier
// CHECK-COUNT-32: arith.extf
// CHECK-NOT:     memref.load %arg1
// CHECK-COUNT-4: vector.load %arg1[%{{.*}}] {alignment = 16 : i64} : memref<?xf32>, vector<8xf32>
// CHECK-NOT:     memref.load %arg1
// CHECK-COUNT-32: arith.truncf
// CHECK:         scf.yield {{.*}} : index, !nvgpu.device.async.token, index, index, index, index
// CHECK:       } else {
// CHECK:       gpu.launch {{.*}} dynamic_shared_memory_size %c8448_i32
// CHECK:         memref.view {{.*}} to memref<4224xf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-16: memref.load %arg0
// CHECK:         gpu.barrier
// CHECK-COUNT-16: arith.extf
// CHECK-COUNT-16: arith.truncf
// CHECK:         gpu.barrier
// CHECK-NOT:   gpu.launch
func.func @transposed_f16(%x: memref<4096x?xf16, strided<[1, 4096]>>, %s: memref<?xf32>,
                          %y: memref<4096x?xf16>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4096 = arith.constant 4096 : index
  %cols = memref.dim %y, %c1 : memref<4096x?xf16>
  scf.parallel (%r, %c) = (%c0, %c0) to (%c4096, %cols) step (%c1, %c1) {
    %v = memref.load %x[%r, %c] : memref<4096x?xf16, strided<[1, 4096]>>
    %w = arith.extf %v : f16 to f32
    %scale = memref.load %s[%r] : memref<?xf32>
    %m = arith.mulf %w, %scale : f32
    %t = arith.truncf %m : f32 to f16
    memref.store %t, %y[%r, %c] : memref<4096x?xf16>
    scf.reduce
  }
  return
}

// -----

// A batch dimension besides the pair: tiles per (batch, tile of r, tile of
// c), the batch index from the block's item; chunks read through a view
// with r last.
// CHECK-LABEL: func.func @batched
// CHECK:       memref.transpose %arg0 (d0, d1, d2) -> (d0, d2, d1)
// CHECK:       gpu.launch {{.*}} dynamic_shared_memory_size %c49152_i32
// CHECK:         scf.for {{.*}} -> (index, !nvgpu.device.async.token, index, index, index, index, index, index) {
// CHECK:         gpu.barrier
// CHECK:       gpu.launch {{.*}} dynamic_shared_memory_size %c4224_i32
// CHECK:         gpu.barrier
// CHECK:       } else {
func.func @batched(%x: memref<?x?x?xf32, strided<[?, 1, ?]>>,
                   %y: memref<?x?x?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = memref.dim %y, %c0 : memref<?x?x?xf32>
  %rows = memref.dim %y, %c1 : memref<?x?x?xf32>
  %cols = memref.dim %y, %c2 : memref<?x?x?xf32>
  scf.parallel (%i, %r, %c) = (%c0, %c0, %c0) to (%b, %rows, %cols) step (%c1, %c1, %c1) {
    %v = memref.load %x[%i, %r, %c] : memref<?x?x?xf32, strided<[?, 1, ?]>>
    memref.store %v, %y[%i, %r, %c] : memref<?x?x?xf32>
    scf.reduce
  }
  return
}

// -----

// The ring takes at most 96 KiB: three staged f32 inputs (16 KiB a tile)
// take a ring of two; four take the scalar form alone (no host check).
// CHECK-LABEL: func.func @three_inputs
// CHECK:       gpu.launch {{.*}} dynamic_shared_memory_size %c98304_i32
// CHECK:         nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// CHECK:       } else {
// CHECK:       gpu.launch {{.*}} dynamic_shared_memory_size %c12672_i32
// CHECK-LABEL: func.func @four_inputs
// CHECK-NOT:   nvgpu.device_async_copy
// CHECK:       gpu.launch {{.*}} dynamic_shared_memory_size %c16896_i32
// CHECK-NOT:   nvgpu.device_async_copy
// CHECK:       return
func.func @three_inputs(%x: memref<?x?xf32, strided<[1, ?]>>, %u: memref<?x?xf32, strided<[1, ?]>>,
                        %v: memref<?x?xf32, strided<[1, ?]>>, %y: memref<?x?xf32>)
    attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %cols = memref.dim %y, %c1 : memref<?x?xf32>
  scf.parallel (%r, %c) = (%c0, %c0) to (%c64, %cols) step (%c1, %c1) {
    %a = memref.load %x[%r, %c] : memref<?x?xf32, strided<[1, ?]>>
    %b = memref.load %u[%r, %c] : memref<?x?xf32, strided<[1, ?]>>
    %d = memref.load %v[%r, %c] : memref<?x?xf32, strided<[1, ?]>>
    %s = arith.addf %a, %b : f32
    %t = arith.addf %s, %d : f32
    memref.store %t, %y[%r, %c] : memref<?x?xf32>
    scf.reduce
  }
  return
}
func.func @four_inputs(%x: memref<?x?xf32, strided<[1, ?]>>, %u: memref<?x?xf32, strided<[1, ?]>>,
                       %v: memref<?x?xf32, strided<[1, ?]>>, %w: memref<?x?xf32, strided<[1, ?]>>,
                       %y: memref<?x?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %cols = memref.dim %y, %c1 : memref<?x?xf32>
  scf.parallel (%r, %c) = (%c0, %c0) to (%c64, %cols) step (%c1, %c1) {
    %a = memref.load %x[%r, %c] : memref<?x?xf32, strided<[1, ?]>>
    %b = memref.load %u[%r, %c] : memref<?x?xf32, strided<[1, ?]>>
    %d = memref.load %v[%r, %c] : memref<?x?xf32, strided<[1, ?]>>
    %e = memref.load %w[%r, %c] : memref<?x?xf32, strided<[1, ?]>>
    %s = arith.addf %a, %b : f32
    %t = arith.addf %s, %d : f32
    %z = arith.addf %t, %e : f32
    memref.store %z, %y[%r, %c] : memref<?x?xf32>
    scf.reduce
  }
  return
}

// -----

// Not tiled: few rows known statically; loads and stores contiguous along
// the same dimension; stores contiguous along different dimensions; a
// transposed read of a buffer that the loop also writes.
// CHECK-LABEL: func.func @few_rows
// CHECK-NOT:   dynamic_shared_memory
// CHECK-LABEL: func.func @same_direction
// CHECK-NOT:   dynamic_shared_memory
// CHECK-LABEL: func.func @stores_disagree
// CHECK-NOT:   dynamic_shared_memory
// CHECK-LABEL: func.func @in_place
// CHECK-NOT:   dynamic_shared_memory
func.func @few_rows(%x: memref<8x?xf32, strided<[1, 8]>>, %y: memref<8x?xf32>)
    attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %cols = memref.dim %y, %c1 : memref<8x?xf32>
  scf.parallel (%r, %c) = (%c0, %c0) to (%c8, %cols) step (%c1, %c1) {
    %v = memref.load %x[%r, %c] : memref<8x?xf32, strided<[1, 8]>>
    memref.store %v, %y[%r, %c] : memref<8x?xf32>
    scf.reduce
  }
  return
}
func.func @same_direction(%x: memref<?x?xf32>, %y: memref<?x?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %y, %c0 : memref<?x?xf32>
  %cols = memref.dim %y, %c1 : memref<?x?xf32>
  scf.parallel (%r, %c) = (%c0, %c0) to (%rows, %cols) step (%c1, %c1) {
    %v = memref.load %x[%r, %c] : memref<?x?xf32>
    memref.store %v, %y[%r, %c] : memref<?x?xf32>
    scf.reduce
  }
  return
}
func.func @stores_disagree(%x: memref<?x?xf32, strided<[1, ?]>>, %y: memref<?x?xf32>,
                           %z: memref<?x?xf32, strided<[1, ?]>>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %y, %c0 : memref<?x?xf32>
  %cols = memref.dim %y, %c1 : memref<?x?xf32>
  scf.parallel (%r, %c) = (%c0, %c0) to (%rows, %cols) step (%c1, %c1) {
    %v = memref.load %x[%r, %c] : memref<?x?xf32, strided<[1, ?]>>
    memref.store %v, %y[%r, %c] : memref<?x?xf32>
    memref.store %v, %z[%r, %c] : memref<?x?xf32, strided<[1, ?]>>
    scf.reduce
  }
  return
}
func.func @in_place(%y: memref<?x?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %y, %c0 : memref<?x?xf32>
  scf.parallel (%r, %c) = (%c0, %c0) to (%rows, %rows) step (%c1, %c1) {
    %v = memref.load %y[%c, %r] : memref<?x?xf32>
    memref.store %v, %y[%r, %c] : memref<?x?xf32>
    scf.reduce
  }
  return
}
