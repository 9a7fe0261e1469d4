// RUN: nerve-opt %s --split-input-file --verify-diagnostics

// What a tiling's lowering relies on, and where the attribute may be.

func.func @warp_tile_not_whole(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf16>) {
  // expected-error @below {{invalid contract tiling: a warp's tile must be whole 16 x 16 instruction tiles}}
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) outs(%c : memref<?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = mma_sync, tile_m = 32, tile_n = 128, tile_k = 32, warps_m = 4, warps_n = 2, stages = 3>
  return
}

// -----

func.func @one_stage(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf16>) {
  // expected-error @below {{invalid contract tiling: at least two stages}}
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) outs(%c : memref<?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 1>
  return
}

// -----

func.func @wgmma_rows(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf16>) {
  // expected-error @below {{invalid contract tiling: a wgmma tiling takes four warps along m per 64 rows, one along n}}
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) outs(%c : memref<?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = wgmma, tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 2, warps_n = 2, stages = 4>
  return
}

// -----

func.func @fma_lane_groups(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  // expected-error @below {{invalid contract tiling: an fma warp's tile must be whole groups of 4 for each lane (rows a multiple of 16, columns of 32)}}
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = fma, tile_m = 128, tile_n = 128, tile_k = 16, warps_m = 2, warps_n = 8, stages = 3>
  return
}

// -----

func.func @fma_accumulators(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  // expected-error @below {{invalid contract tiling: an fma lane takes at most 128 accumulators}}
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = fma, tile_m = 256, tile_n = 256, tile_k = 16, warps_m = 2, warps_n = 2, stages = 3>
  return
}

// -----

func.func @fma_tile_k(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  // expected-error @below {{invalid contract tiling: an fma tile_k must be 8, 16 or 32}}
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = fma, tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 4, warps_n = 2, stages = 3>
  return
}

// -----

func.func @fma_copies(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  // expected-error @below {{invalid contract tiling: the operand tiles must be whole 16-byte groups for every thread}}
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = fma, tile_m = 64, tile_n = 64, tile_k = 8, warps_m = 4, warps_n = 2, stages = 3>
  return
}

// -----

func.func @tf32_tile_k(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  // expected-error @below {{invalid contract tiling: a wgmma tile_k must be 128-byte rows: 64 16-bit elements, 32 tf32}}
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = wgmma_tf32, tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4>
  return
}

// -----

func.func @wgmma_too_much_shared(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf16>) {
  // expected-error @below {{invalid contract tiling: its stages take 394240 bytes of shared memory, more than 262144}}
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) outs(%c : memref<?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = wgmma, tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 8>
  return
}

// -----

func.func @mixed_operands(%a: memref<?x?xf16>, %b: memref<?x?xbf16>, %c: memref<?x?xf32>) {
  // expected-error @below {{operands must have one element type}}
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf16>, memref<?x?xbf16>) outs(%c : memref<?x?xf32>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4>
  return
}

// -----

func.func @f32_on_tensor_cores(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  // expected-error @below {{f32 operands take an fma or tf32 tiling, 16-bit ones mma_sync or wgmma}}
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4>
  return
}

// -----

func.func @f16_on_fma(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf32>) {
  // expected-error @below {{f32 operands take an fma or tf32 tiling, 16-bit ones mma_sync or wgmma}}
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) outs(%c : memref<?x?xf32>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = fma, tile_m = 128, tile_n = 128, tile_k = 16, warps_m = 4, warps_n = 2, stages = 3>
  return
}

// -----

func.func @no_unit_stride(%a: memref<?x?xf16, strided<[?, ?]>>, %b: memref<?x?xf16>, %c: memref<?x?xf16>) {
  // expected-error @below {{each operand must have a dimension of unit stride}}
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf16, strided<[?, ?]>>, memref<?x?xf16>) outs(%c : memref<?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4>
  return
}

// -----

func.func @contracted_sizes(%a: memref<8x16xf16>, %b: memref<8x32xf16>, %c: memref<8x8xf16>) {
  // expected-error @below {{the operands' contracted sizes differ}}
  gpumap.tiled_contract ins(%a, %b : memref<8x16xf16>, memref<8x32xf16>) outs(%c : memref<8x8xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4>
  return
}

// -----

func.func @output_sizes(%a: memref<8x16xf16>, %b: memref<4x16xf16>, %c: memref<8x8xf16>) {
  // expected-error @below {{the output's sizes differ from the operands'}}
  gpumap.tiled_contract ins(%a, %b : memref<8x16xf16>, memref<4x16xf16>) outs(%c : memref<8x8xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4>
  return
}

// -----

func.func @tiling_on_a_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @below {{'gpumap.contract_tiling' is only for a tdim.contract}}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  } {gpumap.contract_tiling = #gpumap.contract_tiling<instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4>}
  return
}

// -----

func.func @not_a_tiling(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @below {{'gpumap.contract_tiling' must be a #gpumap.contract_tiling}}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  } {gpumap.contract_tiling = 3 : i64}
  return
}

// -----

func.func @with_rank(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %v: memref<?xf16>, %c: memref<?x?xf16>) {
  // expected-error @below {{`with` input #0 must be indexed as the output is (rank 2)}}
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) with(%v : memref<?xf16>) outs(%c : memref<?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4> epilogue {
  ^bb0(%s: f32, %x: f16):
    gpumap.yield %s : f32
  }
  return
}

// -----

func.func @with_unused(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %v: f32, %c: memref<?x?xf16>) {
  // expected-error @below {{has `with` inputs but no epilogue to use them}}
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) with(%v : f32) outs(%c : memref<?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4>
  return
}

// -----

func.func @epilogue_arguments(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %v: memref<?x?xf16>, %c: memref<?x?xf16>) {
  // expected-error @below {{epilogue argument #1 has type 'f32' but `with` input #0 holds 'f16'}}
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) with(%v : memref<?x?xf16>) outs(%c : memref<?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4> epilogue {
  ^bb0(%s: f32, %x: f32):
    gpumap.yield %s : f32
  }
  return
}

// -----

func.func @epilogue_sum(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf16>) {
  // expected-error @below {{epilogue argument #0 (the sum) must be f32}}
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) outs(%c : memref<?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4> epilogue {
  ^bb0(%s: f16):
    gpumap.yield %s : f16
  }
  return
}

// -----

func.func @epilogue_yield(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf16>) {
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) outs(%c : memref<?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4> epilogue {
  ^bb0(%s: f32):
    // expected-error @below {{yields the float value stored}}
    gpumap.yield %s, %s : f32, f32
  }
  return
}

// -----

func.func @scan_rank(%x: memref<?x?xf16>, %w: memref<?x?xf16>, %s: memref<?x?xf16>) {
  // expected-error @below {{lhs and the output must have rank 3 (time, then a matrix)}}
  gpumap.tiled_contract ins(%x, %w : memref<?x?xf16>, memref<?x?xf16>) outs(%s : memref<?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4> scan carry [0.0 : f32] epilogue {
  ^bb0(%sum: f32, %v: f32):
    gpumap.yield %sum, %v : f32, f32
  }
  return
}

// -----

func.func @scan_lhs_along_k(%x: memref<?x?x?xf16, strided<[?, 1, ?]>>, %w: memref<?x?xf16>, %s: memref<?x?x?xf16>) {
  // expected-error @below {{a scan's lhs must have its unit stride along k}}
  gpumap.tiled_contract ins(%x, %w : memref<?x?x?xf16, strided<[?, 1, ?]>>, memref<?x?xf16>) outs(%s : memref<?x?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4> scan carry [0.0 : f32] epilogue {
  ^bb0(%sum: f32, %v: f32):
    gpumap.yield %sum, %v : f32, f32
  }
  return
}

// -----

func.func @scan_states(%x: memref<?x?x?xf16>, %w: memref<?x?xf16>, %s: memref<?x?x?xf16>) {
  gpumap.tiled_contract ins(%x, %w : memref<?x?x?xf16>, memref<?x?xf16>) outs(%s : memref<?x?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4> scan carry [0.0 : f32] epilogue {
  ^bb0(%sum: f32, %v: f32):
    // expected-error @below {{yields the float value stored, then each carried state}}
    gpumap.yield %sum : f32
  }
  return
}

// -----

func.func @producers_on_mma_sync(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf16>) {
  // expected-error @below {{invalid contract tiling: producer warps are for wgmma tilings only}}
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) outs(%c : memref<?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4, producer_warps = 4>
  return
}

// -----

func.func @two_producer_warps(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf16>) {
  // expected-error @below {{invalid contract tiling: a wgmma tiling's producer warps must be none or a warpgroup (4) beside two multiplying ones (tile_m 128)}}
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) outs(%c : memref<?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = wgmma, tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, producer_warps = 2>
  return
}

// -----

func.func @producers_beside_one_warpgroup(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf16>) {
  // expected-error @below {{invalid contract tiling: a wgmma tiling's producer warps must be none or a warpgroup (4) beside two multiplying ones (tile_m 128)}}
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) outs(%c : memref<?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = wgmma, tile_m = 64, tile_n = 256, tile_k = 64, warps_m = 4, warps_n = 1, stages = 4, producer_warps = 4>
  return
}

// -----

func.func @scan_with_producers(%x: memref<?x?x?xf16>, %w: memref<?x?xf16>, %s: memref<?x?x?xf16>) {
  // expected-error @below {{a scan's tiling takes no producer warps (every thread scans)}}
  gpumap.tiled_contract ins(%x, %w : memref<?x?x?xf16>, memref<?x?xf16>) outs(%s : memref<?x?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = wgmma, tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, producer_warps = 4> scan carry [0.0 : f32] epilogue {
  ^bb0(%sum: f32, %v: f32):
    gpumap.yield %sum, %v : f32, f32
  }
  return
}

// -----

// On a tdim.contract too: a scan's epilogue runs on every thread.
tdim.kernel @scan_producers(%x: !tdim.tensor<[t: ?, b: ?, k: ?], f16>, %w: !tdim.tensor<[j: ?, k: ?], f16>) -> (%s: !tdim.tensor<[t: ?, b: ?, j: ?], f16>) {
  // expected-error @below {{a scan's tiling takes no producer warps (every thread scans)}}
  tdim.contract ins(%x, %w : !tdim.tensor<[t: ?, b: ?, k: ?], f16>, !tdim.tensor<[j: ?, k: ?], f16>) outs(%s : !tdim.tensor<[t: ?, b: ?, j: ?], f16>) scan t carry [0.0 : f32] {gpumap.contract_tiling = #gpumap.contract_tiling<instruction = wgmma, tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, producer_warps = 4>} epilogue {
  ^bb0(%sum: f32, %v: f32):
    %h = arith.addf %v, %sum : f32
    %o = arith.truncf %h : f32 to f16
    tdim.yield %o, %h : f16, f32
  }
  tdim.return
}

// -----

func.func @staged_fma(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  // expected-error @below {{invalid contract tiling: staged_rows is for tensor-core tilings (fma lanes store from registers)}}
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = fma, tile_m = 128, tile_n = 128, tile_k = 16, warps_m = 4, warps_n = 2, stages = 3, staged_rows = 128>
  return
}

// -----

func.func @staged_with_producers(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf16>) {
  // expected-error @below {{invalid contract tiling: staged_rows takes no producer warps (every thread stores)}}
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) outs(%c : memref<?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = wgmma, tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, producer_warps = 4, staged_rows = 128>
  return
}

// -----

func.func @staged_part_of_a_warp(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf16>) {
  // expected-error @below {{invalid contract tiling: staged_rows must divide tile_m and hold whole warps' rows (tile_m / warps_m)}}
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) outs(%c : memref<?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = mma_sync, tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4, staged_rows = 32>
  return
}

// -----

func.func @staged_not_dividing(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf16>) {
  // expected-error @below {{invalid contract tiling: staged_rows must divide tile_m and hold whole warps' rows (tile_m / warps_m)}}
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) outs(%c : memref<?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = wgmma, tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, staged_rows = 48>
  return
}

// -----

func.func @staged_negative(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf16>) {
  // expected-error @below {{invalid contract tiling: staged_rows must not be negative}}
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) outs(%c : memref<?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = wgmma, tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, staged_rows = -64>
  return
}

// -----

func.func @staged_without_unit_stride(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf16, strided<[?, ?]>>) {
  // expected-error @below {{staged_rows needs an output with a dimension of unit stride}}
  gpumap.tiled_contract ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) outs(%c : memref<?x?xf16, strided<[?, ?]>>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = wgmma, tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, staged_rows = 128>
  return
}

// -----

func.func @scan_with_staged_rows(%x: memref<?x?x?xf16>, %w: memref<?x?xf16>, %s: memref<?x?x?xf16>) {
  // expected-error @below {{a scan's tiling takes no staged_rows (it stages its own tile)}}
  gpumap.tiled_contract ins(%x, %w : memref<?x?x?xf16>, memref<?x?xf16>) outs(%s : memref<?x?x?xf16>) lhs_k = 1 rhs_k = 1 output_m = 0 tiling <instruction = wgmma, tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, staged_rows = 128> scan carry [0.0 : f32] epilogue {
  ^bb0(%sum: f32, %v: f32):
    gpumap.yield %sum, %v : f32, f32
  }
  return
}

// -----

// On a tdim.contract too.
tdim.kernel @scan_staged(%x: !tdim.tensor<[t: ?, b: ?, k: ?], f16>, %w: !tdim.tensor<[j: ?, k: ?], f16>) -> (%s: !tdim.tensor<[t: ?, b: ?, j: ?], f16>) {
  // expected-error @below {{a scan's tiling takes no staged_rows (it stages its own tile)}}
  tdim.contract ins(%x, %w : !tdim.tensor<[t: ?, b: ?, k: ?], f16>, !tdim.tensor<[j: ?, k: ?], f16>) outs(%s : !tdim.tensor<[t: ?, b: ?, j: ?], f16>) scan t carry [0.0 : f32] {gpumap.contract_tiling = #gpumap.contract_tiling<instruction = wgmma, tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, staged_rows = 128>} epilogue {
  ^bb0(%sum: f32, %v: f32):
    %h = arith.addf %v, %sum : f32
    %o = arith.truncf %h : f32 to f16
    tdim.yield %o, %h : f16, f32
  }
  tdim.return
}
