// RUN: nerve-opt %s --nerve-fuse-kernel-loops --nerve-gpu-select-strategy --nerve-parallel-loops-to-gpu --split-input-file | FileCheck %s
// RUN: nerve-opt %s --nerve-fuse-kernel-loops --nerve-gpu-select-strategy='chip=sm_80' --nerve-parallel-loops-to-gpu --split-input-file | FileCheck %s --check-prefix=A100
// RUN: nerve-opt %s --nerve-fuse-kernel-loops --nerve-gpu-select-strategy='chip=sm_90' --nerve-parallel-loops-to-gpu --split-input-file | FileCheck %s --check-prefix=CLUSTER

// With an A100's 163 KiB (less 1 KiB of reduction scratch), the staging
// holds 41472 f32 columns; rows of up to 82944 run the program by vectors.
// A100-LABEL: func.func @softmax
// A100:         arith.minui %{{.*}}, %c41472 : index
// A100:         arith.cmpi ule, %{{.*}}, %c41472{{.*}} : index
// A100:         arith.cmpi ule, %{{.*}}, %c82944 : index

// With clusters (sm_90), a vector-form row whose staging would take more
// than half of it (115712 bytes) is split over the fewest of 2, 4 or 8
// blocks whose slices take at most 48 KiB (8 when none do), each slice
// ceil(columns / blocks) rounded up to 16 columns and at most the 57856
// columns a block can stage: one launch of clusters (one a row up to 1024
// rows, beyond that a quarter of the rows but at least 1024, the rows
// walked by them in turn), 256 threads a block.
// The blocks and parts staged in part alone on their SM are gone: the
// other rows by vectors run the kernel whose block size is chosen at run
// time. The cluster's rows are its cluster id, strided by the number of
// clusters; each block walks its own slice (from rank * slice) and its
// first block's thread 0 stores the statistics. A reduction's block total
// goes to a one-value slot of shared memory; after a cluster barrier every
// thread reads the slot of each block (nvvm.mapa) and combines them in
// block order. Each row starts by waiting for the arrival that ends the
// previous one's reads (the first row, for the arrival before the loop);
// the last wait comes after the rows, so that no block leaves while others
// may read its slots. The arrival before the loop carries the kernel's
// blocks per SM for ptxas (5; OccupancyHints.cpp moves it onto the kernel).
// CLUSTER-LABEL: func.func @softmax
// CLUSTER:         %[[LE4:.*]] = arith.cmpi ule, %[[ROWBYTES:.*]], %c196608 : index
// CLUSTER:         %[[C48:.*]] = arith.select %[[LE4]], %c4{{.*}}, %c8{{.*}} : index
// CLUSTER:         %[[LE2:.*]] = arith.cmpi ule, %[[ROWBYTES]], %c98304 : index
// CLUSTER:         %[[BLOCKS:.*]] = arith.select %[[LE2]], %c2{{.*}}, %[[C48]] : index
// CLUSTER:         %[[PER:.*]] = arith.ceildivui %{{.*}}, %[[BLOCKS]] : index
// CLUSTER:         %[[GROUPS:.*]] = arith.ceildivui %[[PER]], %c16{{.*}} : index
// CLUSTER:         %[[SLICE:.*]] = arith.muli %[[GROUPS]], %c16{{.*}} : index
// CLUSTER:         %[[WIDE:.*]] = arith.cmpi ugt, %[[ROWBYTES]], %c115712{{.*}} : index
// CLUSTER:         %[[SLICEFITS:.*]] = arith.cmpi ule, %[[SLICE]], %c57856{{.*}} : index
// CLUSTER:         %[[WIDEVEC:.*]] = arith.andi %[[WIDE]], %[[VECTORS:.*]] : i1
// CLUSTER:         %[[CLUSTERED:.*]] = arith.andi %[[WIDEVEC]], %[[SLICEFITS]] : i1
// CLUSTER:         %[[SLICEBYTES:.*]] = arith.muli %[[SLICE]], %c4{{.*}} : index
// CLUSTER:         %[[SMEM:.*]] = arith.index_cast %[[SLICEBYTES]] : index to i32
// CLUSTER:         scf.if %{{.*}} {
// CLUSTER:           scf.if %[[VECTORS]] {
// CLUSTER:             scf.if %[[CLUSTERED]] {
// CLUSTER:               %[[QUARTER:.*]] = arith.ceildivui %[[ROWS:.*]], %c4{{.*}} : index
// CLUSTER:               %[[ATLEAST:.*]] = arith.maxui %c1024{{.*}}, %[[QUARTER]] : index
// CLUSTER:               %[[CLUSTERS:.*]] = arith.minui %[[ROWS]], %[[ATLEAST]] : index
// CLUSTER:               %[[GRID:.*]] = arith.muli %[[CLUSTERS]], %[[BLOCKS]] : index
// CLUSTER:               gpu.launch clusters({{.*}}) in ({{.*}} = %[[BLOCKS]], {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) blocks({{.*}}) in ({{.*}} = %[[GRID]], {{.*}}) threads({{.*}}) in ({{.*}} = %c256{{.*}}, {{.*}}) dynamic_shared_memory_size %[[SMEM]] workgroup(%{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>, %[[SLOT1:.*]] : memref<1xf32, #gpu.address_space<workgroup>>, %[[SLOT2:.*]] : memref<1xf32, #gpu.address_space<workgroup>>) {
// CLUSTER:                 %[[RANK:.*]] = gpu.cluster_block_id x
// CLUSTER:                 %[[CID:.*]] = gpu.cluster_id x
// CLUSTER:                 %[[NCLUSTERS:.*]] = gpu.cluster_dim x
// CLUSTER:                 %[[BASE:.*]] = arith.muli %[[RANK]], %[[SLICE]] : index
// CLUSTER:                 nvvm.cluster.arrive {aligned}
// CLUSTER-NEXT:            gpumap.occupancy_hint blocks_per_sm = 5
// CLUSTER:                 scf.for %{{.*}} = %[[CID]] to %{{.*}} step %[[NCLUSTERS]] {
// CLUSTER-NEXT:              nvvm.cluster.wait {aligned}
// CLUSTER:                   %[[END:.*]] = arith.addi %[[BASE]], %[[SLICE]] : index
// CLUSTER:                   vector.load
// CLUSTER:                   vector.store
// CLUSTER:                   memref.store %{{.*}}, %[[SLOT1]][%{{.*}}]
// CLUSTER:                   nvvm.cluster.arrive {aligned}
// CLUSTER-NEXT:              nvvm.cluster.wait {aligned}
// CLUSTER:                   %[[ADDR:.*]] = memref.extract_aligned_pointer_as_index %[[SLOT1]]
// CLUSTER:                   %[[ADDR64:.*]] = arith.index_cast %[[ADDR]] : index to i64
// CLUSTER:                   %[[PTR:.*]] = llvm.inttoptr %[[ADDR64]] : i64 to !llvm.ptr<3>
// CLUSTER:                   %[[FIRST:.*]] = nvvm.mapa %[[PTR]], %{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CLUSTER:                   llvm.load %[[FIRST]] : !llvm.ptr<7> -> f32
// CLUSTER:                   scf.for %{{.*}} = %c1{{.*}} to %[[BLOCKS]] step %c1{{.*}} iter_args
// CLUSTER:                     nvvm.mapa %[[PTR]]
// CLUSTER:                     llvm.load
// CLUSTER:                     arith.maximumf
// CLUSTER:                   memref.store %{{.*}}, %[[SLOT2]][%{{.*}}]
// CLUSTER:                   nvvm.cluster.arrive {aligned}
// CLUSTER-NEXT:              nvvm.cluster.wait {aligned}
// CLUSTER:                   memref.extract_aligned_pointer_as_index %[[SLOT2]]
// CLUSTER:                     arith.addf
// CLUSTER:                   nvvm.cluster.arrive {aligned}
// CLUSTER:                   vector.store
// CLUSTER:                 nvvm.cluster.wait {aligned}
// CLUSTER-NEXT:            gpu.terminator
// CLUSTER:             } else {
// CLUSTER:               gpu.launch blocks
// CLUSTER-NOT:             cluster
// CLUSTER:           } else {
// CLUSTER:             gpu.launch blocks
// CLUSTER-NOT:           cluster
// CLUSTER:         } else {

// softmax as tdim lowers it: a max per row, a sum of exponentials per row
// that reads the max, and an elementwise pass that reads both. They become
// one launch, a block per row (grid-stride over rows), ceil(columns / 16)
// threads rounded to a power-of-two number of warps (32 to 256: four
// 16-byte vectors a thread when vectors apply; a kernel for each size). The first pass keeps the row in
// dynamic shared memory as it reads it, the later passes read it back from
// there; each reduction combines within the warp by shuffles, then the
// warps' values in order through shared memory, and thread 0 writes the row
// buffer; the statistics are forwarded in registers. The staging holds
// 47 KiB here (the pass's default shared-memory budget: 12032 f32). In the
// vector form, a row up to twice as wide runs a kernel of its own that keeps
// the first 12032 columns there and reads the rest from global memory
// again; blocks whose staging exceeds 48 KiB take up to 512 threads, and
// vector-form blocks whose staging exceeds half the budget (they run alone
// on their SM; always so for the part-staged kernel) run kernels of their
// own with 1024 threads. Other
// rows wider than the staging run the three loops as launches of their own
// instead (the elementwise pass by vectors or by tiles of a row: such rows
// are wider than half a tile).
// CHECK-LABEL: func.func @softmax
// CHECK-DAG:   %[[X:.*]]: memref<?x?xf32>, %[[Y:.*]]: memref<?x?xf32>
// CHECK:       %[[ROWS:.*]] = memref.dim %[[X]], %c0
// CHECK:       %[[MAX:.*]] = gpu.alloc (%[[ROWS]]) : memref<?xf32>
// CHECK:       %[[SUM:.*]] = gpu.alloc (%[[ROWS]]) : memref<?xf32>
// CHECK:       %[[COLS:.*]] = memref.dim %[[X]], %c1
// CHECK:       %[[WARPS:.*]] = arith.ceildivui %{{.*}}, %c512 : index
//              Threads a block: a power of two from 32 to 512. Rows of
//              one warp or less: the lanes a row, 2^shift (1 to 32), for
//              four vectors a lane.
// CHECK:       %[[NEEDED:.*]] = arith.muli %[[WARPS]], %c32 : index
// CHECK:       arith.cmpi ugt, %[[NEEDED]], %c32{{.*}} : index
// CHECK:       arith.select %{{.*}}, %c64, %c32{{.*}} : index
// CHECK:       arith.cmpi ugt, %[[NEEDED]], %c256{{.*}} : index
// CHECK:       %[[POW2:.*]] = arith.select %{{.*}}, %c512{{.*}}, %{{.*}} : index
// CHECK:       %[[LANES:.*]] = arith.ceildivui %{{.*}}, %c16 : index
// CHECK:       arith.cmpi ugt, %[[LANES]], %c1{{.*}} : index
// CHECK:       arith.cmpi ugt, %[[LANES]], %c16{{.*}} : index
// CHECK:       %[[SHIFT:.*]] = arith.select %{{.*}}, %c5, %{{.*}} : index
//              The vector form, when the row width is a whole number of
//              16-byte vectors, the buffers are aligned and the row is
//              not empty (the register form loads a vector of every row).
// CHECK:       memref.extract_aligned_pointer_as_index %[[X]]
// CHECK:       memref.extract_aligned_pointer_as_index %[[Y]]
// CHECK:       %[[ALIGNED:.*]] = arith.andi
// CHECK:       %[[NONEMPTY:.*]] = arith.cmpi ne, %{{.*}}, %c0{{.*}} : index
// CHECK:       %[[VECTORS:.*]] = arith.andi %[[ALIGNED]], %[[NONEMPTY]] : i1
// CHECK:       %[[CAP:.*]] = arith.minui %{{.*}}, %c12032 : index
// CHECK:       %[[FITS_ALL:.*]] = arith.cmpi ule, %{{.*}}, %c12032{{.*}} : index
// CHECK:       %[[HALF:.*]] = arith.cmpi ule, %{{.*}}, %c24064 : index
// CHECK:       %[[PART:.*]] = arith.andi %[[HALF]], %[[VECTORS]] : i1
// CHECK:       %[[PROGRAM:.*]] = arith.ori %[[FITS_ALL]], %[[PART]] : i1
// CHECK:       %[[BYTES:.*]] = arith.muli %[[CAP]], %c4{{.*}} : index
// CHECK:       %[[SMEM:.*]] = arith.index_cast %[[BYTES]] : index to i32
// CHECK:       %[[LARGE:.*]] = arith.cmpi ugt, %[[BYTES]], %c49152 : index
// CHECK:       %[[MOST:.*]] = arith.select %[[LARGE]], %c512{{.*}}, %c256{{.*}} : index
// CHECK:       %[[TPB:.*]] = arith.minui %[[POW2]], %[[MOST]] : index
// CHECK:       %[[SOLO:.*]] = arith.cmpi ugt, %[[SMEM]], %c24064_i32 : i32
// CHECK:       scf.if %[[PROGRAM]] {
// CHECK:         scf.if %[[VECTORS]] {
// CHECK:           scf.if %[[FITS_ALL]] {
//                    The whole row staged: a thread loads 4 columns at a
//                    time, stages them with one shared-memory store,
//                    combines the lanes in order, four vectors in flight.
//                    A block alone on its SM: 1024 threads, a constant.
// CHECK:             scf.if %[[SOLO]] {
// CHECK:               gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c1024{{.*}}, {{.*}}) dynamic_shared_memory_size %[[SMEM]]
// CHECK:             } else {
//                    Blocks that share their SM: a kernel for each block
//                    size. Rows of a whole warp: a row a warp, reduced by
//                    shuffles alone; a block of one warp, a constant. A
//                    lane takes at most four vectors of a row: it keeps
//                    them in registers (no shared memory), its vector k
//                    at lane + 32 k, one past the row loading the row's
//                    last vector, folding the identity, storing nothing.
// CHECK:               %[[WHOLE:.*]] = arith.cmpi eq, %[[SHIFT]], %c5{{.*}} : index
// CHECK:               %[[ONE_WARP:.*]] = arith.cmpi eq, %[[TPB]], %c32{{.*}} : index
// CHECK:               %[[WHOLE_WARP:.*]] = arith.andi %[[ONE_WARP]], %[[WHOLE]] : i1
// CHECK:               scf.if %[[WHOLE_WARP]] {
// CHECK-NOT:             dynamic_shared_memory_size
// CHECK:                 gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c32{{.*}}, {{.*}}) {
// CHECK:                   %[[WARP:.*]] = arith.divui %{{.*}}, %c32{{.*}} : index
// CHECK-NOT:               memref.view
// CHECK:                   scf.for {{.*}} {
// CHECK-NOT:                 gpu.barrier
// CHECK:                     %[[NV:.*]] = arith.divui %{{.*}}, %c4{{.*}} : index
// CHECK:                     %[[V0:.*]] = arith.addi
// CHECK:                     %[[IN0:.*]] = arith.cmpi ult, %[[V0]], %[[NV]] : index
// CHECK:                     %[[LAST:.*]] = arith.subi %[[NV]], %c1{{.*}} : index
// CHECK:                     %[[AT0:.*]] = arith.minui %[[V0]], %[[LAST]] : index
// CHECK:                     %[[C0:.*]] = arith.muli %[[AT0]], %c4{{.*}} : index
// CHECK:                     %[[X0:.*]] = vector.load %[[X]][%{{.*}}, %[[C0]]]
// CHECK-NOT:                 vector.store
// CHECK-COUNT-3:             arith.maximumf
// CHECK:                     arith.select %[[IN0]], %{{.*}}, %cst{{.*}} : f32
// CHECK-COUNT-3:             vector.load %[[X]]
// CHECK:                     gpu.shuffle xor %{{.*}}, %c16_i32, %c32_i32 : f32
//                            The sum and the elementwise pass load nothing.
// CHECK-NOT:                 vector.load
// CHECK:                     vector.extract %[[X0]][0]
// CHECK:                     arith.subf
// CHECK-NOT:                 vector.load
// CHECK:                     gpu.shuffle xor %{{.*}}, %c16_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK-NOT:                 vector.load
// CHECK:                     arith.divf
// CHECK-NOT:                 vector.load
// CHECK:                     scf.if %{{.*}} {
// CHECK-NEXT:                  vector.store %{{.*}}, %[[Y]]
// CHECK:                     scf.if %{{.*}} {
// CHECK-NEXT:                  vector.store %{{.*}}, %[[Y]]
// CHECK:                     scf.if %{{.*}} {
// CHECK-NEXT:                  vector.store %{{.*}}, %[[Y]]
// CHECK:                     scf.if %{{.*}} {
// CHECK-NEXT:                  vector.store %{{.*}}, %[[Y]]
// CHECK:                   gpu.terminator
//                    Shorter rows: 2^shift lanes a row, two warps a block
//                    (64 threads, 2 x 32 >> shift rows); a warp walks its
//                    rows in step, a group past the last row redoing it and
//                    storing nothing; the butterfly's exchanges across
//                    groups are dropped.
// CHECK:               } else {
// CHECK:                 scf.if %{{.*}} {
// CHECK:                   %[[ROWS_A_WARP:.*]] = arith.shrui %c32{{.*}}, %[[SHIFT]] : index
// CHECK:                   %[[GROUP_ROWS:.*]] = arith.muli %c2{{.*}}, %[[ROWS_A_WARP]] : index
// CHECK:                   gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c64{{.*}}, {{.*}}) {
// CHECK:                     %[[GROUP_LANES:.*]] = arith.shli %c1{{.*}}, %[[SHIFT]] : index
// CHECK:                     scf.for %[[BASE:.*]] = {{.*}} {
// CHECK:                       %[[MINE:.*]] = arith.addi %[[BASE]], %{{.*}} : index
// CHECK:                       %[[VALID:.*]] = arith.cmpi ult, %[[MINE]], %{{.*}} : index
// CHECK:                       arith.minui %[[MINE]], %{{.*}} : index
// CHECK-NOT:                   gpu.barrier
// CHECK:                       %{{.*}}, %{{.*}} = gpu.shuffle xor %{{.*}}, %c16_i32, %c32_i32 : f32
// CHECK:                       %[[WITHIN:.*]] = arith.cmpi ult, %c16{{.*}}, %[[GROUP_LANES]] : index
// CHECK:                       arith.select %[[WITHIN]], %{{.*}}, %{{.*}} : f32
// CHECK-NOT:                   gpu.barrier
// CHECK:                       scf.if %[[VALID]] {
// CHECK:                         vector.store
// CHECK:                     gpu.terminator
// CHECK:               } else {
//                    Blocks of 64 and 128 threads keep rows in registers
//                    too (their threads are never capped); from 256 (the
//                    most, 256 or 512, when the staging is small or
//                    large) a thread may take more vectors: staged.
// CHECK:                 arith.cmpi eq, %[[TPB]], %c64{{.*}} : index
// CHECK:                 gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c64{{.*}}, {{.*}}) workgroup
// CHECK:                 gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c128{{.*}}, {{.*}}) workgroup
// CHECK:                 gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c256{{.*}}, {{.*}}) dynamic_shared_memory_size %[[SMEM]]
// CHECK:                 gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c512{{.*}}, {{.*}}) dynamic_shared_memory_size %[[SMEM]]
// CHECK:               scf.for {{.*}} -> (f32, f32, f32, f32) {
// CHECK:                 %[[VX:.*]] = vector.load %[[X]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<?x?xf32>, vector<4xf32>
// CHECK-NEXT:            vector.store %[[VX]], %{{.*}}[%{{.*}}] {alignment = 16 : i64} : memref<?xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-COUNT-4:         arith.maximumf
// CHECK:               vector.load {{.*}} : memref<?xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK:               vector.store %{{.*}}, %[[Y]]
// CHECK:           } else {
//                    Part of the row staged: the first 12032 columns kept
//                    as the max reads them, read back from there by the
//                    later passes, the rest from global memory again.
// CHECK:             gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c1024{{.*}}, {{.*}}) dynamic_shared_memory_size %[[SMEM]]
// CHECK:                 %[[PX:.*]] = vector.load %[[X]]
// CHECK-NEXT:            scf.if %{{.*}} {
// CHECK-NEXT:              vector.store %[[PX]], %{{.*}} : memref<?xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK:                 scf.if %{{.*}} -> (vector<4xf32>) {
// CHECK-NEXT:              vector.load {{.*}} : memref<?xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK:                 } else {
// CHECK-NEXT:              vector.load %[[X]]
//              Else the same program element by element (whole rows only).
// CHECK:       } else {
// CHECK:       gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %[[TPB]], {{.*}}) dynamic_shared_memory_size %[[SMEM]] workgroup(%[[SCRATCH:.*]] : memref<32xf32, #gpu.address_space<workgroup>>)
// CHECK:         %[[RAW:.*]] = gpu.dynamic_shared_memory
// CHECK:         %[[ROWCOPY:.*]] = memref.view %[[RAW]][%{{.*}}][%[[CAP]]] {{.*}} to memref<?xf32, #gpu.address_space<workgroup>>
// CHECK:         scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
//                  The max: eight loads from global memory at a time, kept in
//                  shared memory.
// CHECK:           scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK:             %[[V:.*]] = memref.load %[[X]][%{{.*}}, %[[J:.*]]] : memref<?x?xf32>
// CHECK-NEXT:        memref.store %[[V]], %[[ROWCOPY]][%[[J]]]
// CHECK:             arith.maximumf
// CHECK:           gpu.shuffle xor %{{.*}}, %c16_i32, %c32_i32 : f32
// CHECK:           gpu.shuffle xor %{{.*}}, %c1_i32, %c32_i32
// CHECK:           memref.store %{{.*}}, %[[SCRATCH]]
// CHECK:           gpu.barrier
// CHECK:           scf.for {{.*}} -> (f32) {
// CHECK:             memref.load %[[SCRATCH]]
// CHECK:             arith.maximumf
// CHECK:           gpu.barrier
// CHECK:           %[[M:.*]] = arith.maximumf %cst{{.*}}, %{{.*}} : f32
// CHECK:           scf.if %{{.*}} {
// CHECK-NEXT:        memref.store %[[M]], %[[MAX]][%{{.*}}]
//                  The sum: the row from shared memory, the max from a register.
// CHECK:           scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-NOT:         memref.load %[[X]]
// CHECK:             %[[R:.*]] = memref.load %[[ROWCOPY]]
// CHECK:             arith.subf %[[R]], %[[M]] : f32
// CHECK-NOT:         memref.load %[[MAX]]
// CHECK:           gpu.barrier
// CHECK:           gpu.barrier
// CHECK:           %[[S:.*]] = arith.addf %cst{{.*}}, %{{.*}} : f32
// CHECK:           memref.store %[[S]], %[[SUM]]
//                  The elementwise pass: four columns per step, then the rest.
// CHECK:           scf.for
// CHECK-COUNT-4:     memref.load %[[ROWCOPY]]
// CHECK-COUNT-4:     arith.divf %{{.*}}, %[[S]] : f32
// CHECK-COUNT-4:     memref.store %{{.*}}, %[[Y]]
// CHECK:           scf.for
// CHECK:             memref.store %{{.*}}, %[[Y]]
// CHECK:       } else {
//                Each reduction a row per block (rows too wide for the
//                program are long: no launch with a row per warp), its
//                threads loading vectors when the buffers allow.
// CHECK-NOT:     arith.cmpi uge, %{{.*}}, %c{{1024|4096}} :
// CHECK:         gpu.launch
// CHECK:           vector.load %[[X]]
// CHECK:           gpu.shuffle
// CHECK:           gpu.barrier
// CHECK:         } else {
// CHECK:         gpu.launch
// CHECK-NOT:       vector.load
// CHECK:           gpu.shuffle
// CHECK:           gpu.barrier
// CHECK:         gpu.launch
// CHECK:           vector.load %[[X]]
// CHECK:           gpu.shuffle
// CHECK:           gpu.barrier
// CHECK:         } else {
// CHECK:         gpu.launch
// CHECK-NOT:       vector.load
// CHECK:           gpu.shuffle
// CHECK:           gpu.barrier
//                The elementwise pass: by vectors when the buffers allow.
// CHECK:         gpu.launch
// CHECK-NOT:       gpu.shuffle
// CHECK:           vector.load %[[X]]
// CHECK:           vector.store %{{.*}}, %[[Y]]
// CHECK:         } else {
// CHECK:         gpu.launch
// CHECK-NOT:       gpu.shuffle
// CHECK-NOT:     gpu.launch
// CHECK:       gpu.dealloc
// CHECK-NOT:   gpu.launch
func.func @softmax(%x: memref<?x?xf32>, %y: memref<?x?xf32>) attributes {nerve.kernel} {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %rows = memref.dim %x, %c0 : memref<?x?xf32>
  %max = memref.alloc(%rows) : memref<?xf32>
  scf.parallel (%r) = (%c0) to (%rows) step (%c1) {
    %cols = memref.dim %x, %c1 : memref<?x?xf32>
    %m = scf.for %c = %c0 to %cols step %c1 iter_args(%acc = %ninf) -> (f32) {
      %v = memref.load %x[%r, %c] : memref<?x?xf32>
      %n = arith.maximumf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %m, %max[%r] : memref<?xf32>
    scf.reduce
  }
  %sum = memref.alloc(%rows) : memref<?xf32>
  scf.parallel (%r) = (%c0) to (%rows) step (%c1) {
    %cols = memref.dim %x, %c1 : memref<?x?xf32>
    %s = scf.for %c = %c0 to %cols step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%r, %c] : memref<?x?xf32>
      %m = memref.load %max[%r] : memref<?xf32>
      %d = arith.subf %v, %m : f32
      %e = math.exp %d : f32
      %n = arith.addf %acc, %e : f32
      scf.yield %n : f32
    }
    memref.store %s, %sum[%r] : memref<?xf32>
    scf.reduce
  }
  %cols = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%r, %c) = (%c0, %c0) to (%rows, %cols) step (%c1, %c1) {
    %v = memref.load %x[%r, %c] : memref<?x?xf32>
    %m = memref.load %max[%r] : memref<?xf32>
    %s = memref.load %sum[%r] : memref<?xf32>
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    %q = arith.divf %e, %s : f32
    memref.store %q, %y[%r, %c] : memref<?x?xf32>
    scf.reduce
  }
  memref.dealloc %max : memref<?xf32>
  memref.dealloc %sum : memref<?xf32>
  return
}

// -----

// An elementwise pass that loads more than the staged row and the
// statistics (a weight per column, as layer_norm's) keeps the kernels of a
// block that stages the row whole, alone on its SM or not, and in part; it
// runs on clusters only rows too wide for a block to stage whole (here
// more than 57856 f32 columns), four blocks an SM for ptxas; slices of at
// most 40 KiB take a kernel of their own, five blocks an SM.
// CHECK-LABEL: func.func @weighted_rows
// CLUSTER-LABEL: func.func @weighted_rows
// CLUSTER:         %[[FITS_ALL:.*]] = arith.cmpi ule, %{{.*}}, %c57856{{.*}} : index
// CLUSTER:         %[[PROGRAM:.*]] = arith.ori %[[FITS_ALL]], %{{.*}} : i1
// CLUSTER:         %[[SOLO:.*]] = arith.cmpi ugt, %{{.*}}, %c115712_i32 : i32
// CLUSTER:         %[[TOO_WIDE:.*]] = arith.xori %[[FITS_ALL]], %true{{.*}} : i1
// CLUSTER:         %[[SLICEFITS:.*]] = arith.cmpi ule, %{{.*}}, %c57856{{.*}} : index
// CLUSTER:         %[[WIDEVEC:.*]] = arith.andi %[[TOO_WIDE]], %[[VECTORS:.*]] : i1
// CLUSTER:         %[[CLUSTERED:.*]] = arith.andi %[[WIDEVEC]], %[[SLICEFITS]] : i1
// CLUSTER:         %[[ANY:.*]] = arith.ori %[[PROGRAM]], %[[CLUSTERED]] : i1
// CLUSTER:         scf.if %[[ANY]] {
// CLUSTER:           scf.if %[[VECTORS]] {
// CLUSTER:             scf.if %[[CLUSTERED]] {
// CLUSTER:               %[[FIVE:.*]] = arith.cmpi ule, %{{.*}}, %c40960_i32 : i32
// CLUSTER-NEXT:          scf.if %[[FIVE]] {
// CLUSTER:                 gpu.launch clusters
// CLUSTER:                   nvvm.cluster.arrive {aligned}
// CLUSTER-NEXT:              gpumap.occupancy_hint blocks_per_sm = 5
// CLUSTER:               } else {
// CLUSTER:                 gpu.launch clusters
// CLUSTER:                   nvvm.cluster.arrive {aligned}
// CLUSTER-NEXT:              gpumap.occupancy_hint blocks_per_sm = 4
// CLUSTER:             } else {
// CLUSTER-NEXT:          scf.if %[[FITS_ALL]] {
// CLUSTER-NEXT:            scf.if %[[SOLO]] {
// CLUSTER:                   gpu.launch blocks({{.*}}) threads({{.*}}) in (%{{.*}} = %c1024{{.*}}, {{.*}})
// CLUSTER-NOT:                 cluster
// CLUSTER:                 } else {
// CLUSTER:                   gpu.launch blocks
// CLUSTER-NOT:                 cluster
// CLUSTER:               } else {
//                          Staged in part: only where clusters do not fit.
// CLUSTER:                 gpu.launch blocks({{.*}}) threads({{.*}}) in (%{{.*}} = %c1024{{.*}}, {{.*}})
// CLUSTER-NOT:               cluster
// CLUSTER:           } else {
// CLUSTER:             gpu.launch blocks
// CLUSTER-NOT:           cluster
// CLUSTER:         } else {
func.func @weighted_rows(%x: memref<?x?xf32>, %w: memref<?xf32>, %y: memref<?x?xf32>) attributes {nerve.kernel} {
  %ninf = arith.constant 0xFF800000 : f32
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %rows = memref.dim %x, %c0 : memref<?x?xf32>
  %max = memref.alloc(%rows) : memref<?xf32>
  scf.parallel (%r) = (%c0) to (%rows) step (%c1) {
    %cols = memref.dim %x, %c1 : memref<?x?xf32>
    %m = scf.for %c = %c0 to %cols step %c1 iter_args(%acc = %ninf) -> (f32) {
      %v = memref.load %x[%r, %c] : memref<?x?xf32>
      %n = arith.maximumf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %m, %max[%r] : memref<?xf32>
    scf.reduce
  }
  %cols = memref.dim %x, %c1 : memref<?x?xf32>
  scf.parallel (%r, %c) = (%c0, %c0) to (%rows, %cols) step (%c1, %c1) {
    %v = memref.load %x[%r, %c] : memref<?x?xf32>
    %m = memref.load %max[%r] : memref<?xf32>
    %s = memref.load %w[%c] : memref<?xf32>
    %d = arith.subf %v, %m : f32
    %q = arith.mulf %d, %s : f32
    memref.store %q, %y[%r, %c] : memref<?x?xf32>
    scf.reduce
  }
  memref.dealloc %max : memref<?xf32>
  return
}

// -----

// An elementwise pass that writes what the reductions read (in place) is
// not taken into a row program: the row sum runs a row per warp and the
// pass is a launch of its own.
// CHECK-LABEL: func.func @in_place
// CHECK-NOT:   dynamic_shared_memory
// CHECK:       gpu.launch
// CHECK:         vector.load
// CHECK:         gpu.barrier
// CHECK:       gpu.launch
// CHECK:         vector.load
// CHECK:         gpu.shuffle
// CHECK:       } else {
// CHECK:       arith.cmpi uge, %{{.*}}, %c1024
// CHECK:       gpu.launch
// CHECK-NOT:     vector.load
// CHECK:         gpu.barrier
// CHECK:       gpu.launch
// CHECK-NOT:     vector.load
// CHECK:         gpu.shuffle
// CHECK:       gpu.launch
// CHECK-NOT:     gpu.shuffle
func.func @in_place(%x: memref<?x?xf32>) attributes {nerve.kernel} {
  %zero = arith.constant 0.000000e+00 : f32
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %rows = memref.dim %x, %c0 : memref<?x?xf32>
  %cols = memref.dim %x, %c1 : memref<?x?xf32>
  %sum = memref.alloc(%rows) : memref<?xf32>
  scf.parallel (%r) = (%c0) to (%rows) step (%c1) {
    %s = scf.for %c = %c0 to %cols step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%r, %c] : memref<?x?xf32>
      %n = arith.addf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %s, %sum[%r] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%r, %c) = (%c0, %c0) to (%rows, %cols) step (%c1, %c1) {
    %v = memref.load %x[%r, %c] : memref<?x?xf32>
    %s = memref.load %sum[%r] : memref<?xf32>
    %q = arith.divf %v, %s : f32
    memref.store %q, %x[%r, %c] : memref<?x?xf32>
    scf.reduce
  }
  memref.dealloc %sum : memref<?xf32>
  return
}

// -----

// Statically short rows (fewer than 64 columns) are left to a thread per
// row: no row program.
// CHECK-LABEL: func.func @short_rows
// CHECK-NOT:   dynamic_shared_memory
// CHECK-NOT:   gpu.barrier
func.func @short_rows(%x: memref<?x16xf32>, %y: memref<?x16xf32>) attributes {nerve.kernel} {
  %zero = arith.constant 0.000000e+00 : f32
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %rows = memref.dim %x, %c0 : memref<?x16xf32>
  %sum = memref.alloc(%rows) : memref<?xf32>
  scf.parallel (%r) = (%c0) to (%rows) step (%c1) {
    %s = scf.for %c = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%r, %c] : memref<?x16xf32>
      %n = arith.addf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %s, %sum[%r] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%r, %c) = (%c0, %c0) to (%rows, %c16) step (%c1, %c1) {
    %v = memref.load %x[%r, %c] : memref<?x16xf32>
    %s = memref.load %sum[%r] : memref<?xf32>
    %q = arith.divf %v, %s : f32
    memref.store %q, %y[%r, %c] : memref<?x16xf32>
    scf.reduce
  }
  memref.dealloc %sum : memref<?xf32>
  return
}
