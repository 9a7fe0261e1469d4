// RUN: nerve-opt %s --split-input-file --nerve-gpu-select-contract-tiling=chip=sm_90 | FileCheck %s --check-prefix=SM90
// RUN: nerve-opt %s --split-input-file --nerve-gpu-select-contract-tiling=chip=sm_80 | FileCheck %s --check-prefix=SM80
// RUN: nerve-opt %s --split-input-file --nerve-gpu-select-contract-tiling=chip=sm_89 | FileCheck %s --check-prefix=SM89
// RUN: nerve-opt %s --split-input-file --nerve-gpu-select-contract-tiling="chip=sm_90 tf32=true" | FileCheck %s --check-prefix=TF32
// RUN: nerve-opt %s --split-input-file --nerve-gpu-select-contract-tiling="chip=sm_80 tf32=true" | FileCheck %s --check-prefix=TF32-SM80
// RUN: not nerve-opt %s --split-input-file --nerve-gpu-select-contract-tiling=chip=sm_91 2>&1 | FileCheck %s --check-prefix=BAD_CHIP

// BAD_CHIP: error: unknown chip 'sm_91'; nerve compiles for sm_80, sm_89, sm_90 and sm_100

// 16-bit products of matrices take tensor cores: wgmma on sm_90 (any unit
// strides), mma.sync elsewhere, four stages where two blocks' rings fit an
// SM (sm_80's 164 KiB), three where they do not (sm_89's 100 KiB). Their
// output rows go through the ring as f32 as many at once as it holds:
// wgmma's 128 (132 KiB of 192), mma.sync's 64 (34 KiB; 128 would take 68).
// SM90-LABEL: tdim.kernel @linear
// SM90: gpumap.contract_tiling = #gpumap.contract_tiling<instruction = wgmma, tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, staged_rows = 128>
// SM80-LABEL: tdim.kernel @linear
// SM80: gpumap.contract_tiling = #gpumap.contract_tiling<instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4, staged_rows = 64>
// SM89-LABEL: tdim.kernel @linear
// SM89: gpumap.contract_tiling = #gpumap.contract_tiling<instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 3, staged_rows = 64>
tdim.kernel @linear(%x: !tdim.tensor<[b: ?, k: ?], f16>, %w: !tdim.tensor<[j: ?, k: ?], f16>) -> (%y: !tdim.tensor<[b: ?, j: ?], f16>) {
  tdim.contract ins(%x, %w : !tdim.tensor<[b: ?, k: ?], f16>, !tdim.tensor<[j: ?, k: ?], f16>) outs(%y : !tdim.tensor<[b: ?, j: ?], f16>)
  tdim.return
}

// -----

// Operands contiguous along their rows or columns alike; a few static rows
// take 64-row blocks.
// SM90-LABEL: tdim.kernel @few_rows
// SM90: gpumap.contract_tiling = #gpumap.contract_tiling<instruction = wgmma, tile_m = 64, tile_n = 256, tile_k = 64, warps_m = 4, warps_n = 1, stages = 4, staged_rows = 64>
// SM80-LABEL: tdim.kernel @few_rows
// SM80: gpumap.contract_tiling = #gpumap.contract_tiling<instruction = mma_sync, tile_m = 64, tile_n = 128, tile_k = 32, warps_m = 1, warps_n = 2, stages = 4, staged_rows = 64>
tdim.kernel @few_rows(%a: !tdim.tensor<[k: ?, i: 48], bf16>, %b: !tdim.tensor<[k: ?, j: ?], bf16>) -> (%c: !tdim.tensor<[i: 48, j: ?], bf16>) {
  tdim.contract ins(%a, %b : !tdim.tensor<[k: ?, i: 48], bf16>, !tdim.tensor<[k: ?, j: ?], bf16>) outs(%c : !tdim.tensor<[i: 48, j: ?], bf16>)
  tdim.return
}

// -----

// Several row dimensions that are one in memory (a linear layer over time
// and batch) take tensor cores as one.
// SM90-LABEL: tdim.kernel @rows_merge
// SM90: gpumap.contract_tiling = #gpumap.contract_tiling<instruction = wgmma
tdim.kernel @rows_merge(%x: !tdim.tensor<[t: 4, b: 8, k: ?], f16>, %w: !tdim.tensor<[j: ?, k: ?], f16>) -> (%y: !tdim.tensor<[t: 4, b: 8, j: ?], f16>) {
  tdim.contract ins(%x, %w : !tdim.tensor<[t: 4, b: 8, k: ?], f16>, !tdim.tensor<[j: ?, k: ?], f16>) outs(%y : !tdim.tensor<[t: 4, b: 8, j: ?], f16>)
  tdim.return
}

// -----

// f32 operands take IEEE fused multiply-adds on every chip: blocks of
// 128 x 128, eight warps, k 16 at a time, three stages; few static rows
// take blocks of 64. A scan over lhs's outermost row takes the product's.
// SM90-LABEL: tdim.kernel @fma
// SM90: #gpumap.contract_tiling<instruction = fma, tile_m = 128, tile_n = 128, tile_k = 16, warps_m = 4, warps_n = 2, stages = 3>
// SM90: #gpumap.contract_tiling<instruction = fma, tile_m = 64, tile_n = 128, tile_k = 16, warps_m = 2, warps_n = 4, stages = 3>
// SM90: scan t carry {{.*}}#gpumap.contract_tiling<instruction = fma, tile_m = 128, tile_n = 128, tile_k = 16, warps_m = 4, warps_n = 2, stages = 3>
// SM80-LABEL: tdim.kernel @fma
// SM80: #gpumap.contract_tiling<instruction = fma, tile_m = 128, tile_n = 128, tile_k = 16, warps_m = 4, warps_n = 2, stages = 3>
// Where tf32 is allowed, sm_90 reads f32 operands as tf32 on wgmma in any
// layout (rhs read along j too); sm_80 (no wgmma) on mma.sync, three
// stages of 32 KiB (two blocks' four would not fit its 164 KiB).
// TF32-LABEL: tdim.kernel @fma
// TF32: #gpumap.contract_tiling<instruction = wgmma_tf32, tile_m = 128, tile_n = 256, tile_k = 32, warps_m = 8, warps_n = 1, stages = 4, staged_rows = 128>
// TF32: #gpumap.contract_tiling<instruction = wgmma_tf32, tile_m = 64, tile_n = 256, tile_k = 32, warps_m = 4
// TF32: scan t carry {{.*}}#gpumap.contract_tiling<instruction = wgmma_tf32, tile_m = 128, tile_n = 256, tile_k = 32, warps_m = 8, warps_n = 1, stages = 4>
// TF32: #gpumap.contract_tiling<instruction = wgmma_tf32, tile_m = 128, tile_n = 256, tile_k = 32, warps_m = 8, warps_n = 1, stages = 4, staged_rows = 128>
// TF32-SM80-LABEL: tdim.kernel @fma
// TF32-SM80: #gpumap.contract_tiling<instruction = mma_sync_tf32, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 3, staged_rows = 128>
// TF32-SM80: #gpumap.contract_tiling<instruction = mma_sync_tf32, tile_m = 64
// TF32-SM80: scan t carry {{.*}}#gpumap.contract_tiling<instruction = mma_sync_tf32, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4>
!x = !tdim.tensor<[t: ?, b: ?, k: ?], f32>
!y = !tdim.tensor<[t: ?, b: ?, j: ?], f32>
tdim.kernel @fma(%a: !tdim.tensor<[i: ?, k: ?], f32>, %b: !tdim.tensor<[k: ?, j: ?], f32>,
                 %few: !tdim.tensor<[i: 40, k: ?], f32>, %x: !x, %w: !tdim.tensor<[j: ?, k: ?], f32>)
    -> (%c: !tdim.tensor<[i: ?, j: ?], f32>, %d: !tdim.tensor<[i: 40, j: ?], f32>, %s: !y,
        %l: !tdim.tensor<[i: ?, j: ?], f32>) {
  tdim.contract ins(%a, %b : !tdim.tensor<[i: ?, k: ?], f32>, !tdim.tensor<[k: ?, j: ?], f32>) outs(%c : !tdim.tensor<[i: ?, j: ?], f32>)
  tdim.contract ins(%few, %b : !tdim.tensor<[i: 40, k: ?], f32>, !tdim.tensor<[k: ?, j: ?], f32>) outs(%d : !tdim.tensor<[i: 40, j: ?], f32>)
  tdim.contract ins(%x, %w : !x, !tdim.tensor<[j: ?, k: ?], f32>) outs(%s : !y) scan t carry [0.0 : f32] epilogue {
  ^bb0(%sum: f32, %v: f32):
    tdim.yield %sum, %v : f32, f32
  }
  tdim.contract ins(%a, %w : !tdim.tensor<[i: ?, k: ?], f32>, !tdim.tensor<[j: ?, k: ?], f32>) outs(%l : !tdim.tensor<[i: ?, j: ?], f32>)
  tdim.return
}

// -----

// An output with no unit stride is stored from registers (no staged rows).
// SM90-LABEL: tdim.kernel @strided_output
// SM90: #gpumap.contract_tiling<instruction = wgmma, tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4>
// SM80-LABEL: tdim.kernel @strided_output
// SM80: #gpumap.contract_tiling<instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4>
tdim.kernel @strided_output(%x: !tdim.tensor<[b: ?, k: ?], f16>, %w: !tdim.tensor<[j: ?, k: ?], f16>,
                            %y: !tdim.tensor<[b: ?, j: ?], f16, strides = [?, ?]>) {
  tdim.contract ins(%x, %w : !tdim.tensor<[b: ?, k: ?], f16>, !tdim.tensor<[j: ?, k: ?], f16>) outs(%y : !tdim.tensor<[b: ?, j: ?], f16, strides = [?, ?]>)
  tdim.return
}

// -----

// The general loops keep f64, batched products, row
// dimensions that are not one in memory (here apart in the output) and
// operands with no unit stride; a tiling written already stays.
// SM90-LABEL: tdim.kernel @general
// SM90-NOT: gpumap.contract_tiling
// SM90: tdim.return
tdim.kernel @general(%a: !tdim.tensor<[i: ?, k: ?], f64>, %b: !tdim.tensor<[k: ?, j: ?], f64>,
                     %x: !tdim.tensor<[t: ?, b: ?, k: ?], f16>, %w: !tdim.tensor<[j: ?, k: ?], f16>,
                     %p: !tdim.tensor<[g: ?, i: ?, k: ?], f16>, %q: !tdim.tensor<[g: ?, j: ?, k: ?], f16>,
                     %s: !tdim.tensor<[i: ?, k: ?], f16, strides = [?, ?]>)
    -> (%c: !tdim.tensor<[i: ?, j: ?], f64>, %y: !tdim.tensor<[t: ?, j: ?, b: ?], f16>,
        %r: !tdim.tensor<[g: ?, i: ?, j: ?], f16>, %u: !tdim.tensor<[i: ?, j: ?], f16>) {
  tdim.contract ins(%a, %b : !tdim.tensor<[i: ?, k: ?], f64>, !tdim.tensor<[k: ?, j: ?], f64>) outs(%c : !tdim.tensor<[i: ?, j: ?], f64>)
  tdim.contract ins(%x, %w : !tdim.tensor<[t: ?, b: ?, k: ?], f16>, !tdim.tensor<[j: ?, k: ?], f16>) outs(%y : !tdim.tensor<[t: ?, j: ?, b: ?], f16>)
  tdim.contract ins(%p, %q : !tdim.tensor<[g: ?, i: ?, k: ?], f16>, !tdim.tensor<[g: ?, j: ?, k: ?], f16>) outs(%r : !tdim.tensor<[g: ?, i: ?, j: ?], f16>)
  tdim.contract ins(%s, %w : !tdim.tensor<[i: ?, k: ?], f16, strides = [?, ?]>, !tdim.tensor<[j: ?, k: ?], f16>) outs(%u : !tdim.tensor<[i: ?, j: ?], f16>)
  tdim.return
}

// -----

// Merged rows take an epilogue input over none of them (a bias) or over
// all of them in the output's order; one whose rows are in another order
// keeps the general loops.
// SM90-LABEL: tdim.kernel @epilogue_rows
// SM90: with(%bias, %r : {{.*}}) outs(%y : {{.*}}) {gpumap.contract_tiling = #gpumap.contract_tiling<instruction = wgmma
// SM90: with(%rt : {{.*}}) outs(%z : {{.*}}) epilogue
!x = !tdim.tensor<[t: ?, b: ?, k: ?], f16>
!y = !tdim.tensor<[t: ?, b: ?, j: ?], f16>
!yt = !tdim.tensor<[b: ?, t: ?, j: ?], f16>
tdim.kernel @epilogue_rows(%x: !x, %w: !tdim.tensor<[j: ?, k: ?], f16>, %bias: !tdim.tensor<[j: ?], f16>, %r: !y, %rt: !yt) -> (%y: !y, %z: !y) {
  tdim.contract ins(%x, %w : !x, !tdim.tensor<[j: ?, k: ?], f16>) with(%bias, %r : !tdim.tensor<[j: ?], f16>, !y) outs(%y : !y) epilogue {
  ^bb0(%s: f32, %c: f32, %v: f32):
    %p = arith.addf %s, %c : f32
    %q = arith.addf %p, %v : f32
    tdim.yield %q : f32
  }
  tdim.contract ins(%x, %w : !x, !tdim.tensor<[j: ?, k: ?], f16>) with(%rt : !yt) outs(%z : !y) epilogue {
  ^bb0(%s: f32, %v: f32):
    %q = arith.addf %s, %v : f32
    tdim.yield %q : f32
  }
  tdim.return
}

// -----

// A scan over lhs's outermost row (lhs read along k) takes the product
// tilings, four stages on every chip (the f32 output tile reuses the
// ring): sm_89's three would not hold it. Time elsewhere keeps the loops.
// SM90-LABEL: tdim.kernel @scans
// SM90: scan t {{.*}}#gpumap.contract_tiling<instruction = wgmma
// SM90: scan b carry
// SM90-NOT: gpumap.contract_tiling
// SM90: tdim.return
// SM89-LABEL: tdim.kernel @scans
// SM89: #gpumap.contract_tiling<instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4>
!x = !tdim.tensor<[t: ?, b: ?, k: ?], f16>
!y = !tdim.tensor<[t: ?, b: ?, j: ?], f16>
tdim.kernel @scans(%x: !x, %w: !tdim.tensor<[j: ?, k: ?], f16>) -> (%s: !y, %z: !y) {
  tdim.contract ins(%x, %w : !x, !tdim.tensor<[j: ?, k: ?], f16>) outs(%s : !y) scan t carry [0.0 : f32] epilogue {
  ^bb0(%sum: f32, %v: f32):
    tdim.yield %sum, %v : f32, f32
  }
  tdim.contract ins(%x, %w : !x, !tdim.tensor<[j: ?, k: ?], f16>) outs(%z : !y) scan b carry [0.0 : f32] epilogue {
  ^bb0(%sum: f32, %v: f32):
    tdim.yield %sum, %v : f32, f32
  }
  tdim.return
}

// -----

// SM80-LABEL: tdim.kernel @forced
// SM80: #gpumap.contract_tiling<instruction = mma_sync, tile_m = 64, tile_n = 64, tile_k = 32, warps_m = 2, warps_n = 2, stages = 2>
tdim.kernel @forced(%x: !tdim.tensor<[b: ?, k: ?], f16>, %w: !tdim.tensor<[j: ?, k: ?], f16>) -> (%y: !tdim.tensor<[b: ?, j: ?], f16>) {
  tdim.contract ins(%x, %w : !tdim.tensor<[b: ?, k: ?], f16>, !tdim.tensor<[j: ?, k: ?], f16>) outs(%y : !tdim.tensor<[b: ?, j: ?], f16>) {gpumap.contract_tiling = #gpumap.contract_tiling<instruction = mma_sync, tile_m = 64, tile_n = 64, tile_k = 32, warps_m = 2, warps_n = 2, stages = 2>}
  tdim.return
}
