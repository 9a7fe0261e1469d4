// RUN: nerve-opt %s --nerve-fuse-kernel-loops --nerve-gpu-select-strategy --nerve-parallel-loops-to-gpu | FileCheck %s

// A parallel loop with a reduction becomes two launches: up to 1024 blocks
// of 256 threads each fold their grid-stride share in order and combine
// their threads pairwise in workgroup memory (a fixed tree), then one block
// does the same over the blocks' partial values. A result stored right
// after the loop is stored by that block; the buffers are freed at the end.
// A 1-D body that only loads, along the contiguous dimension, folds chunks
// of 16 bytes (4 f32): a thread's chunks a grid stride apart, 4 a round,
// the round's loads first, then each chunk's lanes in order, a chunk past
// the end reading the round's first and left out; thread 0 then folds the
// elements after the last whole chunk. A block is launched for every
// 256 x 4 chunks (up to 1024). The host takes the chunks by vectors when
// the buffer is aligned to them, else by scalars: the same fold.
// CHECK-LABEL: func.func @sum
// CHECK-SAME:    %[[X:[^:]*]]: memref<?xf32>, %[[OUT:[^:]*]]: memref<f32>
// CHECK:     %[[N:.*]] = arith.select
// CHECK:     %[[WHOLE:.*]] = arith.divui %[[N]], %c4 : index
// CHECK:     %[[ONE:.*]] = arith.maxui %[[WHOLE]], %c1
// CHECK:     %[[WANTED:.*]] = arith.ceildivui %[[ONE]], %c1024 : index
// CHECK:     %[[BLOCKS:.*]] = arith.minui %[[WANTED]], %c1024
// CHECK:     %[[PARTIALS:.*]] = gpu.alloc (%[[BLOCKS]]) : memref<?xf32>
// CHECK:     memref.extract_strided_metadata %[[X]]
// CHECK:     %[[PTR:.*]] = memref.extract_aligned_pointer_as_index %[[X]]
// CHECK:     arith.remui %{{.*}}, %c16
// CHECK:     %[[FITS:.*]] = arith.andi
// CHECK:     scf.if %[[FITS]] {
// CHECK:       gpu.launch blocks(%[[BID:.*]], %{{.*}}, %{{.*}}) in (%[[GRID:[^ ]*]] = %[[BLOCKS]], {{.*}} workgroup(%[[SHM:.*]] : memref<256xf32, #gpu.address_space<workgroup>>) {
// CHECK:         %[[FIRST:.*]] = arith.addi %{{.*}}, %[[TID:[^ ]*]] : index
// CHECK:         %[[STRIDE:.*]] = arith.muli %[[GRID]], %c256
// CHECK:         %[[CHUNKS:.*]] = arith.divui %[[N]], %c4
// CHECK:         %[[ROUND:.*]] = arith.muli %[[STRIDE]], %c4
// CHECK:         %[[ACC:.*]] = scf.for %[[C:.*]] = %[[FIRST]] to %[[CHUNKS]] step %[[ROUND]] iter_args(%[[A:.*]] = %{{.*}}) -> (f32) {
// CHECK:           %[[V0:.*]] = vector.load %[[X]][%{{.*}}] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
// CHECK-COUNT-4:   vector.extract %[[V0]]
// CHECK:           %[[C1:.*]] = arith.addi %[[C]], %[[STRIDE]]
// CHECK:           %[[IN1:.*]] = arith.cmpi ult, %[[C1]], %[[CHUNKS]]
// CHECK:           arith.select %[[IN1]], %[[C1]], %[[C]] : index
// CHECK:           %[[V1:.*]] = vector.load %[[X]]
// CHECK:           %[[L1:.*]] = vector.extract %[[V1]][0]
// CHECK-COUNT-2:   vector.load %[[X]]
// CHECK-NOT:       vector.load
// CHECK:           %[[S0:.*]] = arith.addf %[[A]], %{{.*}} : f32
// CHECK-COUNT-3:   arith.addf
// CHECK:           %[[S4:.*]] = arith.addf %{{.*}}, %[[L1]] : f32
// CHECK-COUNT-3:   arith.addf
// CHECK:           %[[K1:.*]] = arith.select %[[IN1]], %{{.*}}, %{{.*}} : f32
// CHECK:           arith.addf %[[K1]], %{{.*}} : f32
// CHECK:           scf.yield
// CHECK:         %[[IS0:.*]] = arith.cmpi eq, %[[FIRST]], %c0
// CHECK:         %[[TAIL:.*]] = scf.if %[[IS0]] -> (f32) {
// CHECK:           %[[REST:.*]] = arith.muli %[[CHUNKS]], %c4
// CHECK:           scf.for %{{.*}} = %[[REST]] to %[[N]] step %c1{{.*}} iter_args(%{{.*}} = %[[ACC]]) -> (f32) {
// CHECK:             memref.load %[[X]]
// CHECK:         } else {
// CHECK:           scf.yield %[[ACC]] : f32
// CHECK:         memref.store %[[TAIL]], %[[SHM]][%[[TID]]]
// CHECK:         gpu.barrier
// CHECK:         arith.cmpi ult, %[[TID]], %c128
// CHECK:         scf.if
// CHECK:           arith.addf
// CHECK-COUNT-8: gpu.barrier
// CHECK:         scf.if
// CHECK:           memref.store %{{.*}}, %[[PARTIALS]][%[[BID]]]
// CHECK:     } else {
// CHECK:       gpu.launch
// CHECK-NOT:     vector.load
// CHECK:         scf.for
// CHECK-COUNT-16:  memref.load %[[X]]
// CHECK-NOT:       memref.load
// CHECK:           scf.yield
// CHECK:     }
// CHECK:     gpu.launch {{.*}} workgroup(%{{.*}} : memref<256xf32, #gpu.address_space<workgroup>>) {
// CHECK:       scf.for %{{.*}} = %{{.*}} to %[[BLOCKS]] step %{{.*}} iter_args
// CHECK:         memref.load %[[PARTIALS]]
// CHECK:         memref.store %{{.*}}, %[[OUT]][]
// CHECK-NOT: gpu.launch
// CHECK:     gpu.dealloc %[[PARTIALS]]
// CHECK-NOT: gpu.dealloc
// CHECK:     return
func.func @sum(%x: memref<?xf32>, %out: memref<f32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?xf32>
  %sum = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    %v = memref.load %x[%i] : memref<?xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  memref.store %sum, %out[] : memref<f32>
  return
}

// 16-bit chunks are 8 elements, widened lane by lane and folded in f32.
// CHECK-LABEL: func.func @sum_f16
// CHECK:     arith.divui %{{.*}}, %c8 : index
// CHECK:     scf.if
// CHECK:       gpu.launch
// CHECK:         scf.for
// CHECK:           %[[V:.*]] = vector.load %{{.*}} : memref<?xf16>, vector<8xf16>
// CHECK:           %[[E:.*]] = vector.extract %[[V]][0]
// CHECK:           arith.extf %[[E]] : f16 to f32
// CHECK-COUNT-3:   vector.load
// CHECK-NOT:       vector.load
// CHECK-COUNT-32:  arith.addf
// CHECK:     } else {
// CHECK:       gpu.launch
// CHECK:         scf.for
// CHECK-COUNT-32:  memref.load %{{.*}} : memref<?xf16>
// CHECK-NOT:       memref.load
// CHECK:           scf.yield
func.func @sum_f16(%x: memref<?xf16>, %out: memref<f32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?xf16>
  %sum = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    %h = memref.load %x[%i] : memref<?xf16>
    %v = arith.extf %h : f16 to f32
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  memref.store %sum, %out[] : memref<f32>
  return
}

// A body that loads otherwise (here a buffer whose stride is known only at
// run time) folds in rounds of 8 iterations: the round's loads first, then
// the fold in the same order, an iteration past the end reading the
// round's first element and left out of the fold; a block is launched for
// every 256 x 8 iterations (up to 1024).
// CHECK-LABEL: func.func @sum_strided
// CHECK:     %[[WANTED:.*]] = arith.ceildivui %{{.*}}, %c2048 : index
// CHECK:     %[[BLOCKS:.*]] = arith.minui %[[WANTED]], %c1024 : index
// CHECK-NOT: scf.if
// CHECK:     gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%[[GRID:[^ ]*]] = %[[BLOCKS]]
// CHECK:       %[[STRIDE:.*]] = arith.muli %[[GRID]], %c256
// CHECK:       %[[ROUND:.*]] = arith.muli %[[STRIDE]], %c8
// CHECK:       %[[ACC:.*]]:2 = scf.for %[[I:.*]] = %[[FIRST:.*]] to %[[N:.*]] step %[[ROUND]] iter_args(%[[AT:.*]] = %[[FIRST]], %[[A:.*]] = %{{.*}}) -> (index, f32) {
// CHECK:         %[[V0:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<?xf32, strided<[?]>>
// CHECK:         %[[I1:.*]] = arith.addi %[[I]], %[[STRIDE]]
// CHECK:         %[[IN1:.*]] = arith.cmpi ult, %[[I1]], %[[N]]
// CHECK:         arith.select %[[IN1]], %{{.*}}, %[[AT]] : index
// CHECK:         %[[V1:.*]] = memref.load
// CHECK-COUNT-6: memref.load
// CHECK-NOT:     memref.load
// CHECK:         %[[S0:.*]] = arith.addf %[[A]], %[[V0]] : f32
// CHECK:         %[[S1:.*]] = arith.addf %[[S0]], %[[V1]] : f32
// CHECK:         %[[K1:.*]] = arith.select %[[IN1]], %[[S1]], %[[S0]] : f32
// CHECK:         arith.addf %[[K1]], %{{.*}} : f32
// CHECK-COUNT-6: arith.select
// CHECK:         scf.yield %{{.*}}, %{{.*}} : index, f32
// CHECK:       memref.store %[[ACC]]#1
// CHECK:     gpu.launch
// CHECK-NOT: gpu.launch
// CHECK:     return
func.func @sum_strided(%x: memref<?xf32, strided<[?]>>, %out: memref<f32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?xf32, strided<[?]>>
  %sum = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    %v = memref.load %x[%i] : memref<?xf32, strided<[?]>>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  memref.store %sum, %out[] : memref<f32>
  return
}

// A result used otherwise goes to a buffer of its own, read back where the
// loop stood (here by a one-thread launch that scales and stores it).
// CHECK-LABEL: func.func @scaled_sum
// CHECK-SAME:    %[[OUT:[^:]*]]: memref<f32>
// CHECK:     %[[PARTIALS:.*]] = gpu.alloc (%{{.*}}) : memref<?xf32>
// CHECK:     %[[RESULT:.*]] = gpu.alloc () : memref<f32>
// CHECK:     gpu.launch
// CHECK:     gpu.launch
// CHECK:         memref.store %{{.*}}, %[[RESULT]][]
// CHECK:     gpu.launch
// CHECK:       %[[R:.*]] = memref.load %[[RESULT]][]
// CHECK:       %[[H:.*]] = arith.mulf %[[R]], %{{.*}} : f32
// CHECK:       memref.store %[[H]], %[[OUT]][]
// CHECK:     gpu.dealloc %[[PARTIALS]]
// CHECK:     gpu.dealloc %[[RESULT]]
// CHECK:     return
func.func @scaled_sum(%x: memref<?xf32>, %out: memref<f32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %n = memref.dim %x, %c0 : memref<?xf32>
  %sum = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    %v = memref.load %x[%i] : memref<?xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  %h = arith.mulf %sum, %half : f32
  memref.store %h, %out[] : memref<f32>
  return
}

// Over two or more dimensions, a body whose indices serve only as the
// whole index of its loads folds 16-byte chunks of the iterations in
// row-major order: when the host finds the buffer dense over them and
// aligned, a chunk is one vector load of a one-dimensional view; otherwise
// each element of a chunk loads at its own position, a digit a dimension,
// the chunk's advanced by the stride's digits and each lane's by its own,
// with carries, never dividing in the loop.
// CHECK-LABEL: func.func @sum_2d
// CHECK-SAME:    %[[X:[^:]*]]: memref<?x?xf32>, %[[OUT:[^:]*]]: memref<f32>
// CHECK-NOT: gpu.shuffle
// CHECK:     %[[BASE:.*]], %[[OFFSET:.*]], %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %[[X]]
// CHECK:     arith.cmpi eq, %[[STRIDES]]#1, %c1
// CHECK:     arith.cmpi eq, %[[STRIDES]]#0, %{{.*}}
// CHECK:     arith.remui %{{.*}}, %c16
// CHECK:     scf.if
// CHECK:       %[[FLAT:.*]] = memref.reinterpret_cast %[[X]] to offset: [%{{.*}}], sizes: [%{{.*}}], strides: [1]
// CHECK:       gpu.launch
// CHECK:         scf.for
// CHECK-COUNT-4:   vector.load %[[FLAT]][%{{.*}}] {alignment = 16 : i64} : memref<?xf32, strided<[1], offset: ?>>, vector<4xf32>
// CHECK-NOT:       vector.load
// CHECK:           scf.yield
// CHECK:     } else {
// CHECK:       gpu.launch
// CHECK:         arith.remui
// CHECK:         arith.divui
// CHECK:         scf.for {{.*}} iter_args(%[[ROW:.*]] = %{{.*}}, %[[COL:.*]] = %{{.*}}, %{{.*}} = %{{.*}}) -> (index, index, f32) {
// CHECK-NOT:       arith.divui
// CHECK-NOT:       arith.remui
// CHECK:           %[[C:.*]] = arith.addi %[[COL]], %{{.*}} : index
// CHECK:           %[[OVER:.*]] = arith.cmpi uge, %[[C]], %[[N:.*]] : index
// CHECK:           %[[WRAP:.*]] = arith.subi %[[C]], %[[N]] : index
// CHECK:           arith.select %[[OVER]], %[[WRAP]], %[[C]] : index
// CHECK-NOT:       arith.divui
// CHECK:           memref.load %[[X]][%[[ROW]], %[[COL]]] : memref<?x?xf32>
// CHECK-COUNT-3:   memref.load %[[X]][%{{.*}}, %{{.*}}] : memref<?x?xf32>
// CHECK-NOT:       arith.divui
// CHECK:           scf.yield
// CHECK:     }
// CHECK:     gpu.launch
// CHECK:       memref.store %{{.*}}, %[[OUT]][]
// CHECK-NOT: gpu.launch
// CHECK:     return
func.func @sum_2d(%x: memref<?x?xf32>, %out: memref<f32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.dim %x, %c1 : memref<?x?xf32>
  %sum = scf.parallel (%i, %j) = (%c0, %c0) to (%n, %m) step (%c1, %c1) init (%zero) -> f32 {
    %v = memref.load %x[%i, %j] : memref<?x?xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  memref.store %sum, %out[] : memref<f32>
  return
}

// Another body (here weighted by a vector of columns) chooses on the host
// by the sizes. Rows of 128 elements or more, 2^21 elements or more in all,
// reduce as rows (a warp or a block a row, shuffles, by vectors when the
// buffers allow: warp-rows.mlir) into a buffer of a value a row, whose
// whole-tensor reduction then stores the result. Other sizes fold rounds
// of 8 iterations, each thread's position a digit a dimension, advanced by
// the stride's digits with a carry, never dividing.
// CHECK-LABEL: func.func @weighted_sum_2d
// CHECK-SAME:    %[[X:[^:]*]]: memref<?x?xf32>, %[[W:[^:]*]]: memref<?xf32>, %[[OUT:[^:]*]]: memref<f32>
// CHECK:     %[[ROWS:.*]] = memref.dim %[[X]], %c0
// CHECK:     %[[COLS:.*]] = memref.dim %[[X]], %c1
// CHECK:     %[[SIZE:.*]] = arith.muli %[[ROWS]], %[[COLS]]
// CHECK:     %[[LONG:.*]] = arith.cmpi uge, %[[COLS]], %c128
// CHECK:     %[[LARGE:.*]] = arith.cmpi uge, %[[SIZE]], %c2097152
// CHECK:     %[[WIDE:.*]] = arith.andi %[[LONG]], %[[LARGE]]
// CHECK:     scf.if %[[WIDE]] {
// CHECK:       %[[PERROW:.*]] = gpu.alloc (%{{.*}}) : memref<?xf32>
// CHECK:       gpu.launch
// CHECK:         gpu.shuffle xor
// CHECK:         memref.store %{{.*}}, %[[PERROW]][%{{.*}}] : memref<?xf32>
// CHECK:       gpu.launch
// CHECK:         memref.load %[[PERROW]]
// CHECK:       gpu.launch
// CHECK:         memref.store %{{.*}}, %[[OUT]][]
// CHECK:       gpu.dealloc %[[PERROW]]
// CHECK:     } else {
// CHECK-NOT:   gpu.shuffle
// CHECK:       gpu.launch
// CHECK:         arith.remui
// CHECK:         arith.divui
// CHECK:         scf.for {{.*}} iter_args(%[[ROW:.*]] = %{{.*}}, %[[COL:.*]] = %{{.*}}, %{{.*}} = %{{.*}}) -> (index, index, f32) {
// CHECK-NOT:       arith.divui
// CHECK-NOT:       arith.remui
// CHECK:           memref.load %[[X]][%{{.*}}, %{{.*}}] : memref<?x?xf32>
// CHECK:           memref.load %[[W]][%{{.*}}] : memref<?xf32>
// CHECK:           %[[C:.*]] = arith.addi %[[COL]], %[[DCOL:.*]] : index
// CHECK:           %[[OVER:.*]] = arith.cmpi uge, %[[C]], %[[N:.*]] : index
// CHECK:           %[[WRAP:.*]] = arith.subi %[[C]], %[[N]] : index
// CHECK:           arith.select %[[OVER]], %[[WRAP]], %[[C]] : index
// CHECK:           arith.extui %[[OVER]]
// CHECK-NOT:       arith.divui
// CHECK:           scf.yield
// CHECK:       gpu.launch
// CHECK:         memref.store %{{.*}}, %[[OUT]][]
// CHECK:     }
// CHECK-NOT: gpu.launch
// CHECK:     return
func.func @weighted_sum_2d(%x: memref<?x?xf32>, %w: memref<?xf32>, %out: memref<f32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.dim %x, %c1 : memref<?x?xf32>
  %sum = scf.parallel (%i, %j) = (%c0, %c0) to (%n, %m) step (%c1, %c1) init (%zero) -> f32 {
    %v = memref.load %x[%i, %j] : memref<?x?xf32>
    %u = memref.load %w[%j] : memref<?xf32>
    %p = arith.mulf %v, %u : f32
    scf.reduce(%p : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  memref.store %sum, %out[] : memref<f32>
  return
}

// A body that writes folds one iteration at a time, a block for every 256
// (an iteration past the end would repeat another's store).
// CHECK-LABEL: func.func @sum_and_copy
// CHECK:     arith.ceildivui %{{.*}}, %c256 : index
// CHECK:     gpu.launch
// CHECK:       scf.for {{.*}} iter_args(%[[A:.*]] = %{{.*}}) -> (f32) {
// CHECK:         %[[V:.*]] = memref.load
// CHECK:         memref.store %[[V]]
// CHECK:         %[[S:.*]] = arith.addf %[[A]], %[[V]] : f32
// CHECK:         scf.yield %[[S]] : f32
func.func @sum_and_copy(%x: memref<?xf32>, %y: memref<?xf32>, %out: memref<f32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?xf32>
  %sum = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    %v = memref.load %x[%i] : memref<?xf32>
    memref.store %v, %y[%i] : memref<?xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  memref.store %sum, %out[] : memref<f32>
  return
}

// A result used otherwise (a mean) is stored by kernel 2 (after either
// form of kernel 1) into a buffer of its own, read just before its first
// use by the one-thread launch that scales and stores it.
// CHECK-LABEL: func.func @mean_2d
// CHECK-SAME:    %[[OUT:[^:]*]]: memref<f32>
// CHECK:     %[[RESULT:.*]] = gpu.alloc () : memref<f32>
// CHECK:     scf.if
// CHECK:       gpu.launch
// CHECK:     } else {
// CHECK:       gpu.launch
// CHECK:     }
// CHECK:     gpu.launch
// CHECK:       memref.store %{{.*}}, %[[RESULT]][]
// CHECK:     arith.sitofp
// CHECK:     gpu.launch
// CHECK:       %[[R:.*]] = memref.load %[[RESULT]][]
// CHECK:       %[[M:.*]] = arith.divf %[[R]], %{{.*}} : f32
// CHECK:       memref.store %[[M]], %[[OUT]][]
// CHECK:     gpu.dealloc %[[RESULT]]
// CHECK:     return
func.func @mean_2d(%x: memref<?x?xf32>, %out: memref<f32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.dim %x, %c1 : memref<?x?xf32>
  %sum = scf.parallel (%i, %j) = (%c0, %c0) to (%n, %m) step (%c1, %c1) init (%zero) -> f32 {
    %v = memref.load %x[%i, %j] : memref<?x?xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  %count = arith.muli %n, %m : index
  %ci = arith.index_cast %count : index to i64
  %cf = arith.sitofp %ci : i64 to f32
  %mean = arith.divf %sum, %cf : f32
  memref.store %mean, %out[] : memref<f32>
  return
}

// A fold at the top of a kernel that states its merge (an argmax over a
// vector: a value and its position, merged together) is the same tree:
// chunks of 16 bytes (the round's vector loads first, then the fold's own
// step lane by lane, in order), then the blocks' threads and kernel 2's
// merge partial pairs with the combine, a workgroup array and a partials
// buffer per accumulator. The stored position is stored by kernel 2; the
// value, unused, goes to a buffer of its own.
// CHECK-LABEL: func.func @argmax
// CHECK-SAME:    %[[X:[^:]*]]: memref<?xf32>, %[[OUT:[^:]*]]: memref<i32>
// CHECK-DAG: %[[VALUES:.*]] = gpu.alloc (%[[BLOCKS:.*]]) : memref<?xf32>
// CHECK-DAG: %[[AT:.*]] = gpu.alloc (%[[BLOCKS]]) : memref<?xi32>
// CHECK:     scf.if
// CHECK:     gpu.launch {{.*}} workgroup(%[[SV:.*]] : memref<256xf32, #gpu.address_space<workgroup>>, %[[SI:.*]] : memref<256xi32, #gpu.address_space<workgroup>>) {
// CHECK:       scf.for {{.*}} -> (f32, i32) {
// CHECK:         %[[V0:.*]] = vector.load %[[X]]
// CHECK:         %[[E0:.*]] = vector.extract %[[V0]][0]
// CHECK-COUNT-3: vector.load %[[X]]
// CHECK-NOT:     vector.load
// CHECK:         arith.cmpf ogt, %[[E0]]
// CHECK:         arith.cmpi slt
// CHECK:         scf.yield
// CHECK:       scf.if
// CHECK:         scf.for
// CHECK:           memref.load %[[X]]
// CHECK:       memref.store %{{.*}}, %[[SV]]
// CHECK:       memref.store %{{.*}}, %[[SI]]
// CHECK:       gpu.barrier
// CHECK:       scf.if
// CHECK:         %[[MV:.*]] = memref.load %[[SV]][%[[TID:.*]]]
// CHECK:         %[[OV:.*]] = memref.load %[[SV]][%{{.*}}]
// CHECK:         %[[MI:.*]] = memref.load %[[SI]][%[[TID]]]
// CHECK:         %[[OI:.*]] = memref.load %[[SI]][%{{.*}}]
// CHECK:         %[[GT:.*]] = arith.cmpf ogt, %[[OV]], %[[MV]]
// CHECK:         %[[LOWER:.*]] = arith.cmpi slt, %[[OI]], %[[MI]]
// CHECK:         arith.select %{{.*}}, %[[OV]], %[[MV]] : f32
// CHECK:         arith.select %{{.*}}, %[[OI]], %[[MI]] : i32
// CHECK:       memref.store %{{.*}}, %[[VALUES]]
// CHECK:       memref.store %{{.*}}, %[[AT]]
// CHECK:     } else {
// CHECK:       gpu.launch
// CHECK:         scf.for {{.*}} -> (f32, i32) {
// CHECK-COUNT-16:  memref.load %[[X]]
// CHECK:     }
// CHECK:     gpu.launch
// CHECK:       memref.load %[[VALUES]]
// CHECK:       memref.load %[[AT]]
// CHECK:       memref.store %{{.*}}, %[[OUT]][] : memref<i32>
// CHECK-NOT: gpu.launch
// CHECK-NOT: scf.for
// CHECK:     return
// CHECK-NOT: fold.for
func.func @argmax(%x: memref<?xf32>, %out: memref<i32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %none = arith.constant -1 : i32
  %n = memref.dim %x, %c0 : memref<?xf32>
  %r:2 = fold.for %i = %c0 to %n step %c1 iter_args(%best = %ninf, %at = %none) -> (f32, i32) {
    %v = memref.load %x[%i] : memref<?xf32>
    %ii = arith.index_cast %i : index to i32
    %gt = arith.cmpf ogt, %v, %best : f32
    %eq = arith.cmpf oeq, %v, %best : f32
    %lower = arith.cmpi slt, %ii, %at : i32
    %tie = arith.andi %eq, %lower : i1
    %take = arith.ori %gt, %tie : i1
    %nb = arith.select %take, %v, %best : f32
    %na = arith.select %take, %ii, %at : i32
    fold.yield %nb, %na : f32, i32
  } merge {
  ^bb0(%b0: f32, %a0: i32, %b1: f32, %a1: i32):
    %gt = arith.cmpf ogt, %b1, %b0 : f32
    %eq = arith.cmpf oeq, %b1, %b0 : f32
    %lower = arith.cmpi slt, %a1, %a0 : i32
    %tie = arith.andi %eq, %lower : i1
    %take = arith.ori %gt, %tie : i1
    %nb = arith.select %take, %b1, %b0 : f32
    %na = arith.select %take, %a1, %a0 : i32
    fold.yield %nb, %na : f32, i32
  }
  memref.store %r#1, %out[] : memref<i32>
  return
}

// A nest of such folds (a row loop around a column loop, each starting
// from the accumulators the one outside holds) folds both dimensions as
// one: a thread's position is a digit a dimension, advanced by the grid
// stride's digits with a carry.
// CHECK-LABEL: func.func @argmax_2d
// CHECK-SAME:    %[[X:[^:]*]]: memref<?x?xf32>
// CHECK:     gpu.launch
// CHECK:       arith.remui
// CHECK:       arith.divui
// CHECK:       scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[COL:.*]] = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (index, index, f32, i32) {
// CHECK-NOT:     scf.for
// CHECK:         memref.load %[[X]][%{{.*}}, %{{.*}}] : memref<?x?xf32>
// CHECK:         arith.addi %[[COL]], %{{.*}} : index
// CHECK:         arith.cmpi uge
// CHECK:         scf.yield
// CHECK:     gpu.launch
// CHECK-NOT: gpu.launch
// CHECK:     return
func.func @argmax_2d(%x: memref<?x?xf32>, %out: memref<i32>) attributes {nerve.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %none = arith.constant -1 : i32
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.dim %x, %c1 : memref<?x?xf32>
  %r:2 = fold.for %i = %c0 to %n step %c1 iter_args(%best = %ninf, %at = %none) -> (f32, i32) {
    %q:2 = scf.for %j = %c0 to %m step %c1 iter_args(%b = %best, %a = %at) -> (f32, i32) {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      %row = arith.muli %i, %m : index
      %k = arith.addi %row, %j : index
      %kk = arith.index_cast %k : index to i32
      %gt = arith.cmpf ogt, %v, %b : f32
      %eq = arith.cmpf oeq, %v, %b : f32
      %lower = arith.cmpi slt, %kk, %a : i32
      %tie = arith.andi %eq, %lower : i1
      %take = arith.ori %gt, %tie : i1
      %nb = arith.select %take, %v, %b : f32
      %na = arith.select %take, %kk, %a : i32
      scf.yield %nb, %na : f32, i32
    }
    fold.yield %q#0, %q#1 : f32, i32
  } merge {
  ^bb0(%b0: f32, %a0: i32, %b1: f32, %a1: i32):
    %gt = arith.cmpf ogt, %b1, %b0 : f32
    %eq = arith.cmpf oeq, %b1, %b0 : f32
    %lower = arith.cmpi slt, %a1, %a0 : i32
    %tie = arith.andi %eq, %lower : i1
    %take = arith.ori %gt, %tie : i1
    %nb = arith.select %take, %b1, %b0 : f32
    %na = arith.select %take, %a1, %a0 : i32
    fold.yield %nb, %na : f32, i32
  }
  memref.store %r#1, %out[] : memref<i32>
  return
}
