// RUN: nerve-opt %s --split-input-file | nerve-opt --split-input-file | FileCheck %s

// #gpumap.contract_tiling on a tdim.contract and gpumap.tiled_contract over
// memrefs print and parse back.

// CHECK-LABEL: tdim.kernel @linear
// CHECK: tdim.contract
// CHECK-SAME: gpumap.contract_tiling = #gpumap.contract_tiling<instruction = wgmma, tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4>
tdim.kernel @linear(%x: !tdim.tensor<[b: ?, k: ?], f16>, %w: !tdim.tensor<[j: ?, k: ?], f16>) -> (%y: !tdim.tensor<[b: ?, j: ?], f16>) {
  tdim.contract ins(%x, %w : !tdim.tensor<[b: ?, k: ?], f16>, !tdim.tensor<[j: ?, k: ?], f16>) outs(%y : !tdim.tensor<[b: ?, j: ?], f16>) {gpumap.contract_tiling = #gpumap.contract_tiling<instruction = wgmma, tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4>}
  tdim.return
}

// -----

// CHECK-LABEL: func.func @tiled
// CHECK: gpumap.tiled_contract ins(%{{.*}}, %{{.*}} : memref<?x?xbf16>, memref<?x?xbf16>) outs(%{{.*}} : memref<?x?xbf16>) lhs_k = 1 rhs_k = 0 output_m = 0 tiling <instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4> accumulate
func.func @tiled(%a: memref<?x?xbf16>, %b: memref<?x?xbf16>, %c: memref<?x?xbf16>) {
  gpumap.tiled_contract ins(%a, %b : memref<?x?xbf16>, memref<?x?xbf16>) outs(%c : memref<?x?xbf16>) lhs_k = 1 rhs_k = 0 output_m = 0 tiling <instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4> accumulate
  return
}

// -----

// An epilogue: the f32 sum and each `with` input's value (a bias broadcast
// along m by stride 0, a scalar) to the value stored.
// CHECK-LABEL: func.func @epilogue
// CHECK: gpumap.tiled_contract ins(%{{.*}}, %{{.*}} : memref<?x?xf16>, memref<?x?xf16>) with(%{{.*}}, %{{.*}} : memref<?x?xf16, strided<[0, 1]>>, f32) outs(%{{.*}} : memref<?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <{{.*}}> epilogue {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f16, %{{.*}}: f32):
// CHECK: gpumap.yield %{{.*}} : f32
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

// A scan: lhs and the output lead with time; the carried state's start.
// CHECK-LABEL: func.func @scan
// CHECK: gpumap.tiled_contract ins(%{{.*}}, %{{.*}} : memref<?x?x?xf16>, memref<?x?xf16>) outs(%{{.*}} : memref<?x?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <{{.*}}> scan carry [0.000000e+00 : f32] epilogue {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32):
// CHECK: gpumap.yield %{{.*}}, %{{.*}} : f16, f32
func.func @scan(%x: memref<?x?x?xf16>, %w: memref<?x?xf16>, %s: memref<?x?x?xf16>) {
  gpumap.tiled_contract ins(%x, %w : memref<?x?x?xf16>, memref<?x?xf16>) outs(%s : memref<?x?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = wgmma, tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4> scan carry [0.0 : f32] epilogue {
  ^bb0(%sum: f32, %v: f32):
    %h = arith.addf %v, %sum : f32
    %o = arith.truncf %h : f32 to f16
    gpumap.yield %o, %h : f16, f32
  }
  return
}

// -----

// producer_warps prints where it is not 0.
// CHECK-LABEL: func.func @producers
// CHECK: tiling <instruction = wgmma, tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, producer_warps = 4>
func.func @producers(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf16>) {
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) outs(%c : memref<?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = wgmma, tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, producer_warps = 4>
  return
}

// -----

// staged_rows prints where it is not 0.
// CHECK-LABEL: func.func @staged
// CHECK: tiling <instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4, staged_rows = 64>
func.func @staged(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf16>) {
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) outs(%c : memref<?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4, staged_rows = 64>
  return
}
