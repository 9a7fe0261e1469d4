// RUN: nerve-opt %s --nerve-fuse-kernel-loops --nerve-gpu-select-strategy --nerve-parallel-loops-to-gpu --split-input-file | FileCheck %s

// Every access that varies with the innermost index walks the contiguous
// dimension: a thread takes 4 consecutive columns (16 bytes of f32), each
// access one vector, two such groups a grid stride apart in flight. A host
// check picks it only when the buffers allow: a whole number of vectors
// per row, unit innermost strides, rows and base addresses 16-byte
// aligned. Otherwise the scalar mapping runs.
// CHECK-LABEL: func.func @map
// CHECK-SAME:    (%[[X:.*]]: memref<?x?xf32>, %[[Y:.*]]: memref<?x?xf32>)
// CHECK:       %[[COLS:.*]] = memref.dim %[[X]], %c1
// CHECK:       arith.remui %{{.*}}, %c4
// CHECK:       %{{.*}}, %{{.*}}, %{{.*}}:2, %[[XS:.*]]:2 = memref.extract_strided_metadata %[[X]]
// CHECK:       arith.cmpi eq, %[[XS]]#1, %c1
// CHECK:       arith.remui %[[XS]]#0, %c4
// CHECK:       memref.extract_aligned_pointer_as_index %[[X]]
// CHECK:       arith.remui %{{.*}}, %c16
// CHECK:       memref.extract_strided_metadata %[[Y]]
// CHECK:       memref.extract_aligned_pointer_as_index %[[Y]]
// CHECK:       scf.if %{{.*}} {
// CHECK:         %[[CHUNKS:.*]] = arith.divui %{{.*}}, %c4
// CHECK:         gpu.launch
// CHECK:           scf.for %{{.*}} = %{{.*}} to %[[CHUNKS]] step
// CHECK-COUNT-2:     vector.load %[[X]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<?x?xf32>, vector<4xf32>
// CHECK-COUNT-8:     arith.mulf
// CHECK:             vector.from_elements {{.*}} : vector<4xf32>
// CHECK:             vector.store %{{.*}}, %[[Y]][%{{.*}}, %{{.*}}] {alignment = 16 : i64}
// CHECK:             scf.if
// CHECK:               vector.from_elements
// CHECK-NEXT:          vector.store
// CHECK:       } else {
// CHECK:         gpu.launch
// CHECK-NOT:       vector.load
// CHECK:             memref.load %[[X]]
func.func @map(%x: memref<?x?xf32>, %y: memref<?x?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  %rows = memref.dim %x, %c0 : memref<?x?xf32>
  %cols = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%rows, %cols) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x?xf32>
    %s = arith.mulf %v, %two : f32
    memref.store %s, %y[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return
}

// -----

// The narrowest element type decides the lanes: 8 (16 bytes of f16); the
// f32 output is then stored as 32 bytes (split into 16-byte stores by the
// backend), aligned to 16. A row buffer read at the row index does not
// vary with the lanes: each lane reads it (CSE keeps one).
// CHECK-LABEL: func.func @widen
// CHECK:       arith.remui %{{.*}}, %c8
// CHECK:       gpu.launch
// CHECK:         vector.load %{{.*}} {alignment = 16 : i64} : memref<?x?xf16>, vector<8xf16>
// CHECK:         memref.load %{{.*}} : memref<?xf32>
// CHECK:         vector.store %{{.*}} {alignment = 16 : i64} : memref<?x?xf32>, vector<8xf32>
func.func @widen(%x: memref<?x?xf16>, %r: memref<?xf32>, %y: memref<?x?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %x, %c0 : memref<?x?xf16>
  %cols = memref.dim %x, %c1 : memref<?x?xf16>
  scf.parallel (%i, %j) = (%c0, %c0) to (%rows, %cols) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x?xf16>
    %w = arith.extf %v : f16 to f32
    %b = memref.load %r[%i] : memref<?xf32>
    %s = arith.addf %w, %b : f32
    memref.store %s, %y[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return
}

// -----

// Loads along the columns alone (a scale and a shift; the column maximum
// and sum of a softmax over dim 0) are the same vector for every row: a
// thread takes a tile of 4 rows (as many as lanes) of one vector of
// columns, loads each such vector once for the tile, and stores nothing
// for rows past the last.
// CHECK-LABEL: func.func @column_scale_shift
// CHECK-SAME:    (%[[X:.*]]: memref<?x?xf32>, %[[S:.*]]: memref<?xf32>, %[[T:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?x?xf32>)
// CHECK:       scf.if %{{.*}} {
// CHECK:         %[[COLS:.*]] = arith.maxui
// CHECK:         %[[VECS:.*]] = arith.divui %[[COLS]], %c4
// CHECK:         %[[ROWS:.*]] = arith.divui %{{.*}}, %[[COLS]]
// CHECK:         %[[TILES:.*]] = arith.ceildivui %[[ROWS]], %c4
// CHECK:         %[[ITEMS:.*]] = arith.muli %[[TILES]], %[[VECS]]
// CHECK:         gpu.launch
// CHECK:           scf.for %[[ITEM:.*]] = %{{.*}} to %[[ITEMS]] step
// CHECK:             %[[VEC:.*]] = arith.remui %[[ITEM]], %[[VECS]]
// CHECK:             %[[COL:.*]] = arith.muli %[[VEC]], %c4
// CHECK:             %[[INNER:.*]] = arith.addi %{{.*}}, %[[COL]]
// CHECK:             arith.divui %[[ITEM]], %[[VECS]]
// CHECK-COUNT-3:     arith.cmpi ult, %{{.*}}, %[[ROWS]]
// CHECK-COUNT-4:     vector.load %[[X]][%{{.*}}, %[[INNER]]] {alignment = 16 : i64} : memref<?x?xf32>, vector<4xf32>
// CHECK:             vector.load %[[S]][%[[INNER]]] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
// CHECK-NOT:         vector.load %[[S]]
// CHECK:             vector.load %[[T]][%[[INNER]]] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
// CHECK-NOT:         vector.load
// CHECK-COUNT-16:    arith.addf
// CHECK-NOT:         arith.addf
// CHECK:             vector.store %{{.*}}, %[[Y]][%{{.*}}, %[[INNER]]]
// CHECK-COUNT-3:     scf.if
// CHECK-NEXT:          vector.from_elements
// CHECK-NEXT:          vector.store %{{.*}}, %[[Y]][%{{.*}}, %[[INNER]]]
// CHECK:       } else {
func.func @column_scale_shift(%x: memref<?x?xf32>, %s: memref<?xf32>, %t: memref<?xf32>, %y: memref<?x?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %x, %c0 : memref<?x?xf32>
  %cols = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%rows, %cols) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x?xf32>
    %a = memref.load %s[%j] : memref<?xf32>
    %b = memref.load %t[%j] : memref<?xf32>
    %m = arith.mulf %v, %a : f32
    %r = arith.addf %m, %b : f32
    memref.store %r, %y[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return
}

// A bias over 16-bit rows: 8 lanes, tiles of 8 rows, one load of the bias.
// CHECK-LABEL: func.func @column_bias
// CHECK:       gpu.launch
// CHECK-COUNT-8: vector.load %{{.*}} : memref<?x?xf16>, vector<8xf16>
// CHECK:         vector.load %{{.*}} : memref<?xf16>, vector<8xf16>
// CHECK-NOT:     vector.load
// CHECK-COUNT-8: vector.store
// CHECK:       } else {
func.func @column_bias(%x: memref<?x?xf16>, %b: memref<?xf16>, %y: memref<?x?xf16>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %x, %c0 : memref<?x?xf16>
  %cols = memref.dim %x, %c1 : memref<?x?xf16>
  scf.parallel (%i, %j) = (%c0, %c0) to (%rows, %cols) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x?xf16>
    %w = memref.load %b[%j] : memref<?xf16>
    %s = arith.addf %v, %w : f16
    memref.store %s, %y[%i, %j] : memref<?x?xf16>
    scf.reduce
  }
  return
}

// -----

// A loop nested in the body (a fold over a short outer dimension) is
// jammed: one loop carrying each lane's accumulator, its loads vectors.
// CHECK-LABEL: func.func @jammed
// CHECK:       gpu.launch
// CHECK:         %[[R:.*]]:4 = scf.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32) {
// CHECK:           %[[V:.*]] = vector.load {{.*}} : memref<16x?xf32>, vector<4xf32>
// CHECK-COUNT-4:   arith.addf
// CHECK:           scf.yield
// CHECK:         vector.from_elements %[[R]]#0, %[[R]]#1, %[[R]]#2, %[[R]]#3
// CHECK:         vector.store
func.func @jammed(%x: memref<16x?xf32>, %s: memref<?xf32>) attributes {nerve.kernel} {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %cols = memref.dim %x, %c1 : memref<16x?xf32>
  scf.parallel (%c) = (%c0) to (%cols) step (%c1) {
    %r = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%i, %c] : memref<16x?xf32>
      %n = arith.addf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %r, %s[%c] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// A nested loop whose iteration loads many values (a neuron's time loop in
// blocks of steps, storing as it goes: here 8 f16 loads an iteration) is
// not jammed: 8 lanes would hold 64 loaded values besides what the loop
// carries.
// CHECK-LABEL: func.func @blocked_time_loop
// CHECK-NOT:   vector.load
// CHECK:       gpu.launch
// CHECK-NOT:   gpu.launch
func.func @blocked_time_loop(%x: memref<?x?xf16>, %y: memref<?x?xf16>, %v: memref<?xf16>) attributes {nerve.kernel} {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %steps = memref.dim %x, %c0 : memref<?x?xf16>
  %n = memref.dim %x, %c1 : memref<?x?xf16>
  scf.parallel (%j) = (%c0) to (%n) step (%c1) {
    %r = scf.for %t = %c0 to %steps step %c8 iter_args(%acc = %zero) -> (f32) {
      %t1 = arith.addi %t, %c1 : index
      %t2 = arith.addi %t1, %c1 : index
      %t3 = arith.addi %t2, %c1 : index
      %t4 = arith.addi %t3, %c1 : index
      %t5 = arith.addi %t4, %c1 : index
      %t6 = arith.addi %t5, %c1 : index
      %t7 = arith.addi %t6, %c1 : index
      %l0 = memref.load %x[%t, %j] : memref<?x?xf16>
      %l1 = memref.load %x[%t1, %j] : memref<?x?xf16>
      %l2 = memref.load %x[%t2, %j] : memref<?x?xf16>
      %l3 = memref.load %x[%t3, %j] : memref<?x?xf16>
      %l4 = memref.load %x[%t4, %j] : memref<?x?xf16>
      %l5 = memref.load %x[%t5, %j] : memref<?x?xf16>
      %l6 = memref.load %x[%t6, %j] : memref<?x?xf16>
      %l7 = memref.load %x[%t7, %j] : memref<?x?xf16>
      %s01 = arith.addf %l0, %l1 : f16
      %s23 = arith.addf %l2, %l3 : f16
      %s45 = arith.addf %l4, %l5 : f16
      %s67 = arith.addf %l6, %l7 : f16
      %s03 = arith.addf %s01, %s23 : f16
      %s47 = arith.addf %s45, %s67 : f16
      %s07 = arith.addf %s03, %s47 : f16
      memref.store %s07, %y[%t, %j] : memref<?x?xf16>
      %w = arith.extf %s07 : f16 to f32
      %n2 = arith.addf %acc, %w : f32
      scf.yield %n2 : f32
    }
    %h = arith.truncf %r : f32 to f16
    memref.store %h, %v[%j] : memref<?xf16>
    scf.reduce
  }
  return
}

// -----

// Not by vectors: an access that varies with the innermost index along
// another dimension (a transpose), a branch on the lane's own values, and a
// boolean buffer (i1 in memory is not a packed vector), an innermost stride
// that is not 1 in the type (vector.load requires it). The transpose runs
// in tiles instead (TiledTranspose.cpp), its stores one element each.
// CHECK-LABEL: func.func @transpose
// CHECK:       gpu.launch {{.*}} dynamic_shared_memory_size
// CHECK-NOT:   vector.store %{{.*}}, %arg1
// CHECK-LABEL: func.func @branch
func.func @transpose(%x: memref<?x?xf32>, %y: memref<?x?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %y, %c0 : memref<?x?xf32>
  %cols = memref.dim %y, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%rows, %cols) step (%c1, %c1) {
    %v = memref.load %x[%j, %i] : memref<?x?xf32>
    memref.store %v, %y[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return
}

// CHECK-NOT:   vector.load
// CHECK:       gpu.launch
// CHECK-NOT:   gpu.launch
func.func @branch(%x: memref<?xf32>, %y: memref<?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xf32>
    %pos = arith.cmpf ogt, %v, %zero : f32
    scf.if %pos {
      memref.store %v, %y[%i] : memref<?xf32>
    }
    scf.reduce
  }
  return
}

// CHECK-LABEL: func.func @bools
// CHECK-NOT:   vector.load
// CHECK:       gpu.launch
// CHECK-NOT:   gpu.launch
func.func @bools(%x: memref<?xi1>, %y: memref<?xi1>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xi1>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xi1>
    memref.store %v, %y[%i] : memref<?xi1>
    scf.reduce
  }
  return
}

// CHECK-LABEL: func.func @column_major
// CHECK-NOT:   vector.load
// CHECK:       gpu.launch
func.func @column_major(%x: memref<?x?xf32, strided<[1, ?]>>, %y: memref<?x?xf32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %y, %c0 : memref<?x?xf32>
  %cols = memref.dim %y, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%rows, %cols) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x?xf32, strided<[1, ?]>>
    memref.store %v, %y[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return
}

// -----

// A row reduction run a row per warp (or per block, for long rows): when
// its loads along the row allow vectors, lane l folds vectors l, l + 32,
// ... (four in flight), each vector's values combined in order, under the
// same host check; else the scalar launches.
// CHECK-LABEL: func.func @row_sum
// CHECK:       memref.extract_aligned_pointer_as_index
// CHECK:       scf.if %{{.*}} {
// CHECK:         gpu.launch
// CHECK:           vector.load %{{.*}} {alignment = 16 : i64} : memref<?x?xf32>, vector<4xf32>
// CHECK:           gpu.barrier
// CHECK:         } else {
// CHECK:         gpu.launch
// CHECK:           scf.for {{.*}} -> (f32, f32, f32, f32) {
// CHECK:             vector.load %{{.*}} {alignment = 16 : i64} : memref<?x?xf32>, vector<4xf32>
// CHECK-COUNT-4:     arith.addf
// CHECK:           gpu.shuffle xor
// CHECK:       } else {
// CHECK:         arith.cmpi uge, %{{.*}}, %c1024
// CHECK:         gpu.launch
// CHECK-NOT:       vector.load
// CHECK:           gpu.shuffle xor
func.func @row_sum(%x: memref<?x?xf32>, %s: memref<?xf32>) attributes {nerve.kernel} {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %x, %c0 : memref<?x?xf32>
  %cols = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%rows) step (%c1) {
    %r = scf.for %j = %c0 to %cols step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      %n = arith.addf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %r, %s[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// A straight-line body that loads many values (a neuron whose time loop
// had one block of steps, its length known: here 17 f16 loads) keeps the
// scalar mapping: 8 lanes would load 136 values, over the 128 that bound
// the copies of a straight-line body.
// CHECK-LABEL: func.func @one_time_block
// CHECK-NOT:   vector.load
// CHECK:       gpu.launch
// CHECK-NOT:   gpu.launch
func.func @one_time_block(%x: memref<17x?xf16>, %y: memref<?xf16>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c1 : memref<17x?xf16>
  scf.parallel (%j) = (%c0) to (%n) step (%c1) {
    %c0_t = arith.constant 0 : index
    %l0 = memref.load %x[%c0_t, %j] : memref<17x?xf16>
    %c1_t = arith.constant 1 : index
    %l1 = memref.load %x[%c1_t, %j] : memref<17x?xf16>
    %c2_t = arith.constant 2 : index
    %l2 = memref.load %x[%c2_t, %j] : memref<17x?xf16>
    %c3_t = arith.constant 3 : index
    %l3 = memref.load %x[%c3_t, %j] : memref<17x?xf16>
    %c4_t = arith.constant 4 : index
    %l4 = memref.load %x[%c4_t, %j] : memref<17x?xf16>
    %c5_t = arith.constant 5 : index
    %l5 = memref.load %x[%c5_t, %j] : memref<17x?xf16>
    %c6_t = arith.constant 6 : index
    %l6 = memref.load %x[%c6_t, %j] : memref<17x?xf16>
    %c7_t = arith.constant 7 : index
    %l7 = memref.load %x[%c7_t, %j] : memref<17x?xf16>
    %c8_t = arith.constant 8 : index
    %l8 = memref.load %x[%c8_t, %j] : memref<17x?xf16>
    %c9_t = arith.constant 9 : index
    %l9 = memref.load %x[%c9_t, %j] : memref<17x?xf16>
    %c10_t = arith.constant 10 : index
    %l10 = memref.load %x[%c10_t, %j] : memref<17x?xf16>
    %c11_t = arith.constant 11 : index
    %l11 = memref.load %x[%c11_t, %j] : memref<17x?xf16>
    %c12_t = arith.constant 12 : index
    %l12 = memref.load %x[%c12_t, %j] : memref<17x?xf16>
    %c13_t = arith.constant 13 : index
    %l13 = memref.load %x[%c13_t, %j] : memref<17x?xf16>
    %c14_t = arith.constant 14 : index
    %l14 = memref.load %x[%c14_t, %j] : memref<17x?xf16>
    %c15_t = arith.constant 15 : index
    %l15 = memref.load %x[%c15_t, %j] : memref<17x?xf16>
    %c16_t = arith.constant 16 : index
    %l16 = memref.load %x[%c16_t, %j] : memref<17x?xf16>
    %s0 = arith.addf %l0, %l1 : f16
    %s1 = arith.addf %s0, %l2 : f16
    %s2 = arith.addf %s1, %l3 : f16
    %s3 = arith.addf %s2, %l4 : f16
    %s4 = arith.addf %s3, %l5 : f16
    %s5 = arith.addf %s4, %l6 : f16
    %s6 = arith.addf %s5, %l7 : f16
    %s7 = arith.addf %s6, %l8 : f16
    %s8 = arith.addf %s7, %l9 : f16
    %s9 = arith.addf %s8, %l10 : f16
    %s10 = arith.addf %s9, %l11 : f16
    %s11 = arith.addf %s10, %l12 : f16
    %s12 = arith.addf %s11, %l13 : f16
    %s13 = arith.addf %s12, %l14 : f16
    %s14 = arith.addf %s13, %l15 : f16
    %s15 = arith.addf %s14, %l16 : f16
    memref.store %s15, %y[%j] : memref<?xf16>
    scf.reduce
  }
  return
}
