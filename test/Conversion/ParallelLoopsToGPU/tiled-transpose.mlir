// RUN: nerve-opt %s --nerve-parallel-loops-to-gpu --split-input-file | FileCheck %s

// y[r, c] (contiguous along c) from a column-major x[r, c] (contiguous
// along r). Fewer than 16 rows keep the usual mapping (the copy in the
// last else branch). Otherwise, in tiles, by one of two forms that a host
// check of x picks.
//
// By 16-byte chunks (x read through a transposed view, contiguous along
// its last dimension): 64 x 64 tiles of f32, 512 threads a block, two
// chunks each. A block loads its first tile's chunks, then in a loop over
// its tiles (four apart) stores them into the shared tile, meets at a
// barrier, loads the next tile's chunks (if there is one), computes from
// the shared tile's chunks with threads consecutive along c (four
// iterations a chunk), and meets again before the next tile. A tile
// wholly inside the bounds stores unguarded; one at the edge stores only
// where the chunk and the column exist. s[r] (a value per row) is read
// directly.
// CHECK-LABEL: func.func @transposed
// CHECK:       %[[TALL:.*]] = arith.cmpi uge, %{{.*}}, %c16{{.*}} : index
// CHECK:       scf.if %[[TALL]] {
// CHECK:         %[[VIEW:.*]] = memref.transpose %arg0 (d0, d1) -> (d1, d0) : memref<?x?xf32, strided<[1, ?]>> to memref<?x?xf32, strided<[?, 1]>>
// CHECK:         gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c512{{.*}}, {{.*}}) dynamic_shared_memory_size %c16384_i32
// CHECK:           %[[VTILE:.*]] = memref.view {{.*}} to memref<4096xf32, #gpu.address_space<workgroup>>
// CHECK-COUNT-2:   vector.load %[[VIEW]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<?x?xf32, strided<[?, 1]>>, vector<4xf32>
// CHECK:           scf.for {{.*}} iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>) {
// CHECK-COUNT-2:     vector.store %{{.*}}, %[[VTILE]][%{{.*}}] {alignment = 16 : i64}
// CHECK-NEXT:        gpu.barrier
// CHECK:             %[[NEXT:.*]]:2 = scf.if %{{.*}} -> (vector<4xf32>, vector<4xf32>) {
// CHECK-COUNT-2:       vector.load %[[VIEW]]
// CHECK:             } else {
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
// CHECK:             gpu.barrier
// CHECK-NEXT:        scf.yield %[[NEXT]]#0, %[[NEXT]]#1
//
// By elements: 32 x 32 tiles of f32, a block of 256 threads each. The block
// loads x's tile with threads consecutive along r into shared memory (rows
// padded to 33), meets at a barrier, computes with threads consecutive
// along c (four iterations each), x read from the tile transposed, and
// meets again before the next tile. A tile wholly inside the bounds does
// so with no clamps and no guards; one at the edge clamps its loads to the
// last iteration and stores only where the iteration exists.
// CHECK:         } else {
// CHECK:           gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c256{{.*}}, {{.*}}) dynamic_shared_memory_size %c4224_i32
// CHECK:           %[[TILE:.*]] = memref.view {{.*}} to memref<1056xf32, #gpu.address_space<workgroup>>
// CHECK:           scf.for
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
// CHECK-NEXT:      }
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

// f16: by 16-byte chunks, 64 x 64 tiles (128 bytes a side), 256 threads
// with two chunks of eight each; by elements, 64 x 64 tiles too, rows
// padded by two elements (4 bytes), sixteen iterations a thread. Enough
// rows known statically: no fallback. s[r] (a value per row, contiguous
// along r, f32) is read one vector of eight a chunk in the chunk form (its
// buffer in the host check), by elements in the other; in f32 (four
// lanes, @transposed above) by elements in both.
// CHECK-LABEL: func.func @transposed_f16
// CHECK-NOT:   arith.cmpi uge
// CHECK:       memref.extract_aligned_pointer_as_index %arg1
// CHECK:       gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c256{{.*}}, {{.*}}) dynamic_shared_memory_size %c8192_i32
// CHECK:         memref.view {{.*}} to memref<4096xf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-2: vector.load {{.*}} vector<8xf16>
// CHECK:         gpu.barrier
// CHECK-COUNT-16: arith.extf
// CHECK-NOT:     memref.load %arg1
// CHECK-COUNT-2: vector.load %arg1[%{{.*}}] {alignment = 16 : i64} : memref<?xf32>, vector<8xf32>
// CHECK-NOT:     memref.load %arg1
// CHECK-COUNT-16: arith.truncf
// CHECK:         gpu.barrier
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
// CHECK:       gpu.launch {{.*}} dynamic_shared_memory_size %c16384_i32
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
