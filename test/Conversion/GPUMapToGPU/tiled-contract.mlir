// RUN: nerve-opt %s --split-input-file --nerve-convert-gpumap-to-gpu --canonicalize --cse | FileCheck %s

// mma.sync: a block of 2 x 2 warps per 128 x 128 output tile, 4 stages of
// 128 x 32 tiles of each operand (64 KiB); lhs's rows run along k
// (ldmatrix as is), rhs's along n (ldmatrix transposed). The copies are
// 16-byte cp.async, zero-filled past the extents, three tiles ahead; the
// products m16n8k16 in f32; each accumulator stored where it is inside
// the output.
// CHECK-LABEL: func.func @mma
// CHECK-SAME: (%[[A:.*]]: memref<?x?xf16>, %[[B:.*]]: memref<?x?xf16>, %[[C:.*]]: memref<?x?xf32>)
// CHECK: memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: memref.extract_aligned_pointer_as_index %[[B]]
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}}) threads({{.*}}) in (%{{.*}} = %c128, %{{.*}} = %c1, %{{.*}} = %c1) dynamic_shared_memory_size %c65536_i32
// CHECK: gpu.dynamic_shared_memory
// CHECK: nvgpu.device_async_copy %[[A]][{{.*}}], %{{.*}}[{{.*}}], 8, %{{.*}} {bypassL1}
// CHECK: nvgpu.device_async_copy %[[B]][{{.*}}], %{{.*}}[{{.*}}], 8, %{{.*}} {bypassL1}
// CHECK: scf.for
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 2 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK: nvgpu.ldmatrix %{{.*}}[%{{.*}}] {numTiles = 4 : i32, transpose = false}
// CHECK: nvgpu.ldmatrix %{{.*}}[%{{.*}}] {numTiles = 4 : i32, transpose = true}
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: scf.yield
// CHECK-NOT: memref.load %[[C]]
// CHECK: memref.store %{{.*}}, %[[C]][%{{.*}}, %{{.*}}] : memref<?x?xf32>
func.func @mma(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf32>) {
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) outs(%c : memref<?x?xf32>) lhs_k = 1 rhs_k = 0 output_m = 0 tiling <instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4>
  return
}

// -----

// wgmma: two warpgroups per 128 x 256 tile, 4 stages of 48 KiB plus 1 KiB
// to align the ring to the swizzle's period; copies two tiles ahead, made
// visible to the async proxy before the barrier; four m64n256k16 a stage
// with lhs K-major (row) and rhs N-major (row, transposed: atoms of 64
// columns, 8192 bytes apart as the leading offset); the previous stage's
// products waited for. The walk takes at least one tile (k = 0 multiplies
// zeros: the accumulators always come from wgmma). With accumulate, the
// output is read before it is written.
// CHECK-LABEL: func.func @warpgroups
// CHECK-SAME: (%[[A:.*]]: memref<?x?xbf16>, %[[B:.*]]: memref<?x?xbf16>, %[[C:.*]]: memref<?x?xbf16>)
// CHECK-DAG: %[[KMAJOR:.*]] = arith.constant 4611686293305360384 : i64
// CHECK-DAG: %[[ATOMS:.*]] = arith.constant 4611686293338849280 : i64
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}}) threads({{.*}}) in (%{{.*}} = %c256, %{{.*}} = %c1, %{{.*}} = %c1) dynamic_shared_memory_size %c197632_i32
// CHECK: %[[TILES:.*]] = arith.maxui %{{.*}}, %c1 : index
// CHECK: scf.for %{{.*}} = %c0 to %[[TILES]] {{.*}} -> (!llvm.struct<(f32, {{.*}})>, !nvgpu.device.async.token)
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: %[[DA:.*]] = arith.ori %{{.*}}, %[[KMAJOR]] : i64
// CHECK: %[[DB:.*]] = arith.ori %{{.*}}, %[[ATOMS]] : i64
// CHECK: nvvm.wgmma.mma_async %[[DA]], %[[DB]], %{{.*}}, <m = 64, n = 256, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: memref.load %[[C]]
// CHECK: memref.store %{{.*}}, %[[C]]
func.func @warpgroups(%a: memref<?x?xbf16>, %b: memref<?x?xbf16>, %c: memref<?x?xbf16>) {
  gpumap.tiled_contract ins(%a, %b : memref<?x?xbf16>, memref<?x?xbf16>) outs(%c : memref<?x?xbf16>) lhs_k = 1 rhs_k = 0 output_m = 0 tiling <instruction = wgmma, tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4> accumulate
  return
}

// -----

// Producer warps: a third warpgroup (threads 256..383) only copies; the
// ring is followed by each stage's two mbarriers, initialized by thread 0
// (landed: 128 producer threads; released: 8 multiplying warps). The
// multiplying warps wait for a stage to land, order it for the async
// proxy, issue its products and, lane 0 of each warp, release the stage
// before it (its products done). The producer waits for a stage's release
// a ring after its last fill (not for the first ring), copies its chunks
// in a loop, and has cp.async arrive on the stage once they land (a plain
// arrival after element copies).
// CHECK-LABEL: func.func @producer_warps
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}}) threads({{.*}}) in (%{{.*}} = %c384, %{{.*}} = %c1, %{{.*}} = %c1) dynamic_shared_memory_size %c197696_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c128_i32 : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c8_i32 : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c128_i32 : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c8_i32 : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c128_i32 : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c8_i32 : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c128_i32 : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c8_i32 : !llvm.ptr<3>, i32
// CHECK-NOT: nvvm.mbarrier.init
// CHECK: gpu.barrier
// CHECK: %[[CONSUMER:.*]] = arith.cmpi ult, %{{.*}}, %c256 : index
// CHECK: scf.if %[[CONSUMER]] {
// CHECK: scf.for {{.*}} -> (!llvm.struct<(f32, {{.*}})>) {
// CHECK: nvvm.mbarrier.try_wait.parity %{{.*}}, %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32, i32
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: scf.if
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: memref.store
// CHECK: } else {
// CHECK: scf.for
// CHECK: arith.cmpi uge, %{{.*}}, %c4 : index
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: scf.for
// CHECK: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.mbarrier.arrive %{{.*}} {noinc = true} : !llvm.ptr<3>
// CHECK: } else {
// CHECK-NEXT: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK: nvvm.cp.async.wait.group 0
func.func @producer_warps(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf16>) {
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) outs(%c : memref<?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = wgmma, tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, producer_warps = 4>
  return
}

// -----

// An epilogue: after the k walk, each output element's `with` values are
// loaded (at indices clamped into the output) before the region runs on
// them and the sum; the region's value is rounded and stored.
// CHECK-LABEL: func.func @epilogue
// CHECK-SAME: (%[[A:.*]]: memref<?x?xf16>, %[[B:.*]]: memref<?x?xf16>, %[[BIAS:.*]]: memref<?x?xf16, strided<[0, 1]>>, %[[S:.*]]: f32, %[[C:.*]]: memref<?x?xf16>)
// CHECK: gpu.launch
// CHECK: nvvm.mma.sync
// CHECK: scf.yield
// CHECK: %[[BV:.*]] = memref.load %[[BIAS]][%{{.*}}, %{{.*}}] : memref<?x?xf16, strided<[0, 1]>>
// CHECK: %[[BW:.*]] = arith.extf %[[BV]] : f16 to f32
// CHECK: %[[P:.*]] = arith.addf %{{.*}}, %[[BW]] : f32
// CHECK: %[[Q:.*]] = arith.mulf %[[P]], %[[S]] : f32
// CHECK: %[[R:.*]] = arith.truncf %[[Q]] : f32 to f16
// CHECK: scf.if
// CHECK-NEXT: memref.store %[[R]], %[[C]]
func.func @epilogue(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %bias: memref<?x?xf16, strided<[0, 1]>>, %s: f32, %c: memref<?x?xf16>) {
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) with(%bias, %s : memref<?x?xf16, strided<[0, 1]>>, f32) outs(%c : memref<?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4> epilogue {
  ^bb0(%sum: f32, %c16: f16, %scale: f32):
    %cw = arith.extf %c16 : f16 to f32
    %p = arith.addf %sum, %cw : f32
    %q = arith.mulf %p, %scale : f32
    gpumap.yield %q : f32
  }
  return
}

// -----

// A scan: two launches, one for at most tile_m steps (one chunk) and one
// walking chunks of them; a tile gathers tile_m / steps rows of each step
// (lhs copied at (t, m, k)); the products staged in f32 through shared
// memory between barriers, then each thread walks 8 columns of a row (16
// bytes of the output, which has its unit stride along n) through the
// steps with their carried states, storing the epilogue's first values as
// one vector (one element at a time where the chunk is not whole).
// CHECK-LABEL: func.func @scan
// CHECK-SAME: (%[[X:.*]]: memref<?x?x?xf16>, %[[W:.*]]: memref<?x?xf16>, %[[S:.*]]: memref<?x?x?xf16>)
// CHECK: %[[T:.*]] = memref.dim %[[S]], %c0
// CHECK: scf.if
// CHECK: gpu.launch
// CHECK: nvgpu.device_async_copy %[[X]][%{{.*}}, %{{.*}}, %{{.*}}]
// CHECK: nvvm.mma.sync
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<16384xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: scf.for {{.*}} iter_args(%[[V:[^ ]*]] = %{{.*}}, {{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK: vector.load %{{.*}}[%{{.*}}] {alignment = 16 : i64} : memref<16384xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: vector.load %{{.*}}[%{{.*}}] {alignment = 16 : i64} : memref<16384xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: arith.addf %[[V]]
// CHECK: vector.store %{{.*}}, %[[S]][%{{.*}}, %{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<?x?x?xf16>, vector<8xf16>
// CHECK-NEXT: } else {
// CHECK: memref.store %{{.*}}, %[[S]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<?x?x?xf16>
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK: nvvm.mma.sync
func.func @scan(%x: memref<?x?x?xf16>, %w: memref<?x?xf16>, %s: memref<?x?x?xf16>) {
  gpumap.tiled_contract ins(%x, %w : memref<?x?x?xf16>, memref<?x?xf16>) outs(%s : memref<?x?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4> scan carry [0.0 : f32] epilogue {
  ^bb0(%sum: f32, %v: f32):
    %h = arith.addf %v, %sum : f32
    %o = arith.truncf %h : f32 to f16
    gpumap.yield %o, %h : f16, f32
  }
  return
}

// -----

// fma (f32, IEEE): eight warps, two blocks an SM; both tiles stored along
// their outer dimension in 16 rows of 128 + 4 elements (3 stages, 49.5
// KiB). lhs, read along k, is copied an element at a time (transposed on
// the way); rhs, read along n, in 16-byte copies that bypass L1 where its
// rows are aligned (an element a time where not). Two stages ahead; at
// each of the 16 k, a lane reads two 4-element groups of rows and two of
// columns as aligned vectors and adds their 64 products.
// CHECK-LABEL: func.func @fma
// CHECK-SAME: (%[[A:.*]]: memref<?x?xf32>, %[[B:.*]]: memref<?x?xf32>, %[[C:.*]]: memref<?x?xf32>)
// CHECK-NOT: memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: memref.extract_aligned_pointer_as_index %[[B]]
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}}) threads({{.*}}) in (%{{.*}} = %c256, %{{.*}} = %c1, %{{.*}} = %c1) dynamic_shared_memory_size %c50688_i32
// CHECK: gpumap.occupancy_hint blocks_per_sm = 2
// CHECK: memref.view %{{.*}}[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<6336xf32, #gpu.address_space<workgroup>>
// CHECK: memref.view %{{.*}}[%c25344][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<6336xf32, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy %[[A]][{{.*}}], %{{.*}}[{{.*}}], 1, %{{.*}} : memref<?x?xf32> to memref<6336xf32, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy %[[B]][{{.*}}], %{{.*}}[{{.*}}], 4, %{{.*}} {bypassL1}
// CHECK: scf.for
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-4: vector.load %{{.*}}[%{{.*}}] {alignment = 16 : i64} : memref<6336xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-COUNT-64: llvm.intr.fma
// CHECK: vector.load
// CHECK: scf.yield
// CHECK: memref.store %{{.*}}, %[[C]][%{{.*}}, %{{.*}}] : memref<?x?xf32>
func.func @fma(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) lhs_k = 1 rhs_k = 0 output_m = 0 tiling <instruction = fma, tile_m = 128, tile_n = 128, tile_k = 16, warps_m = 4, warps_n = 2, stages = 3>
  return
}

// -----

// wgmma_tf32: f32 operands, both read along k, in the 16-bit kernel's
// bytes: rows of 32 elements (128 bytes), 16-byte copies of 4; four
// m64n256k8 tf32 products a stage.
// CHECK-LABEL: func.func @tf32
// CHECK: dynamic_shared_memory_size %c197632_i32
// CHECK: nvgpu.device_async_copy %{{.*}}[{{.*}}], %{{.*}}[{{.*}}], 4, %{{.*}} {bypassL1} : memref<?x?xf32> to memref<16384xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 256, k = 8>, D[<f32>, <one>], A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
func.func @tf32(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = wgmma_tf32, tile_m = 128, tile_n = 256, tile_k = 32, warps_m = 8, warps_n = 1, stages = 4>
  return
}

// -----

// wgmma_tf32 on rhs read along n: tf32 has no transposed wgmma, so rhs is
// staged K-major as lhs is, copied an element at a time (4-byte cp.async
// into the swizzled rows); both read as K-major (row, col).
// CHECK-LABEL: func.func @tf32_along_n
// CHECK-SAME: (%[[A:.*]]: memref<?x?xf32>, %[[B:.*]]: memref<?x?xf32>, %[[C:.*]]: memref<?x?xf32>)
// CHECK: nvgpu.device_async_copy %[[A]][{{.*}}], %{{.*}}[{{.*}}], 4, %{{.*}} {bypassL1}
// CHECK: nvgpu.device_async_copy %[[B]][{{.*}}], %{{.*}}[{{.*}}], 1, %{{.*}} : memref<?x?xf32> to memref<32768xf32, #gpu.address_space<workgroup>>
// CHECK: nvvm.wgmma.mma_async {{.*}} A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>]
func.func @tf32_along_n(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) lhs_k = 1 rhs_k = 0 output_m = 0 tiling <instruction = wgmma_tf32, tile_m = 128, tile_n = 256, tile_k = 32, warps_m = 8, warps_n = 1, stages = 4>
  return
}

// -----

// mma_sync_tf32: staged as wgmma_tf32 (K-major rows of 32 f32; rhs, read
// along n, transposed an element at a time); each warp reads its
// fragments with ldmatrix untransposed, one 32-bit element a lane and
// matrix, into m16n8k8 tf32 (the registers as i32).
// CHECK-LABEL: func.func @mma_tf32
// CHECK: nvgpu.device_async_copy %{{.*}}[{{.*}}], %{{.*}}[{{.*}}], 1, %{{.*}} : memref<?x?xf32> to memref<12288xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: nvgpu.ldmatrix %{{.*}}[%{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<12288xf32, #gpu.address_space<workgroup>> -> vector<4x1xf32>
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
func.func @mma_tf32(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) lhs_k = 1 rhs_k = 0 output_m = 0 tiling <instruction = mma_sync_tf32, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 3>
  return
}

// -----

// staged_rows = 64 of 128: two passes. In each, after a barrier, the warps
// whose rows it holds write their sums as pairs of columns into lines of
// 128 f32 padded to 136 (the ring's bytes); after another, every thread
// takes 16-byte chunks of the lines: the sums as one vector, the bias at
// each element, the region, one 16-byte store where the chunk is inside
// an aligned output, else a guarded store an element.
// CHECK-LABEL: func.func @staged_rows
// CHECK-SAME: (%[[A:.*]]: memref<?x?xf16>, %[[B:.*]]: memref<?x?xf16>, %[[BIAS:.*]]: memref<?x?xf16, strided<[0, 1]>>, %[[C:.*]]: memref<?x?xf16>)
// CHECK: gpu.launch
// CHECK: nvvm.mma.sync
// CHECK: scf.yield
// CHECK: %[[LINES:.*]] = memref.view %{{.*}} to memref<8704xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: arith.muli %{{.*}}, %c136
// CHECK: vector.store %{{.*}}, %[[LINES]][%{{.*}}] {alignment = 8 : i64} : memref<8704xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %c0 to %c8 step %c1 {
// CHECK: vector.load %[[LINES]][%{{.*}}] {alignment = 16 : i64} : memref<8704xf32, #gpu.address_space<workgroup>>, vector<8xf32>
// CHECK: memref.load %[[BIAS]]
// CHECK: arith.truncf
// CHECK: scf.if
// CHECK-NEXT: vector.from_elements
// CHECK-NEXT: vector.store %{{.*}}, %[[C]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<?x?xf16>, vector<8xf16>
// CHECK-NEXT: } else {
// CHECK: memref.store %{{.*}}, %[[C]]
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: vector.store %{{.*}}, %[[LINES]]{{.*}} vector<2xf32>
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: vector.store %{{.*}}, %[[C]]{{.*}} vector<8xf16>
func.func @staged_rows(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %bias: memref<?x?xf16, strided<[0, 1]>>, %c: memref<?x?xf16>) {
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) with(%bias : memref<?x?xf16, strided<[0, 1]>>) outs(%c : memref<?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4, staged_rows = 64> epilogue {
  ^bb0(%sum: f32, %c16: f16):
    %cw = arith.extf %c16 : f16 to f32
    %p = arith.addf %sum, %cw : f32
    gpumap.yield %p : f32
  }
  return
}

// -----

// An output whose unit stride is along m: lines along m (256 columns of
// 128 rows padded to 132), each accumulator stored alone; the output read
// through its transposed view, 4 f32 a chunk, its old values added.
// CHECK-LABEL: func.func @staged_along_m
// CHECK-SAME: %[[C:[^:]*]]: memref<?x?xf32, strided<[1, ?]>>)
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: %[[LINES:.*]] = memref.view %{{.*}} to memref<33792xf32, #gpu.address_space<workgroup>>
// CHECK: %[[T:.*]] = memref.transpose %[[C]] (d0, d1) -> (d1, d0) : memref<?x?xf32, strided<[1, ?]>> to memref<?x?xf32, strided<[?, 1]>>
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %[[LINES]][%{{.*}}] : memref<33792xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c1 {
// CHECK: vector.load %[[LINES]][%{{.*}}] {alignment = 16 : i64} : memref<33792xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: memref.load %[[C]]
// CHECK: arith.addf
// CHECK: vector.store %{{.*}}, %[[T]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<?x?xf32, strided<[?, 1]>>, vector<4xf32>
// CHECK: } else {
// CHECK: memref.store %{{.*}}, %[[C]]
func.func @staged_along_m(%a: memref<?x?xbf16>, %b: memref<?x?xbf16>, %c: memref<?x?xf32, strided<[1, ?]>>) {
  gpumap.tiled_contract ins(%a, %b : memref<?x?xbf16>, memref<?x?xbf16>) outs(%c : memref<?x?xf32, strided<[1, ?]>>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = wgmma, tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, staged_rows = 128> accumulate
  return
}

// -----

// A scan whose output has its unit stride along m: one column a thread,
// stored an element at a time.
// CHECK-LABEL: func.func @scan_along_m
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f32)
// CHECK-NOT: vector.store %{{.*}}, %arg2
// CHECK: memref.store %{{.*}}, %arg2[%{{.*}}, %{{.*}}, %{{.*}}] : memref<?x?x?xf16>
func.func @scan_along_m(%x: memref<?x?x?xf16>, %w: memref<?x?xf16>, %s: memref<?x?x?xf16>) {
  gpumap.tiled_contract ins(%x, %w : memref<?x?x?xf16>, memref<?x?xf16>) outs(%s : memref<?x?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 1 tiling <instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4> scan carry [0.0 : f32] epilogue {
  ^bb0(%sum: f32, %v: f32):
    %h = arith.addf %v, %sum : f32
    %o = arith.truncf %h : f32 to f16
    gpumap.yield %o, %h : f16, f32
  }
  return
}
