// nerve-gpu-select-strategy over the inputs of the strategies' own tests:
// the strategy each top-level loop gets, in order (the priority table of
// SelectGPUStrategy.cpp). A loop of a row program after its first gets none.
// RUN: nerve-opt %S/coarsen.mlir --split-input-file --nerve-fuse-kernel-loops --nerve-gpu-select-strategy | FileCheck %s --check-prefix=COARSEN
// RUN: nerve-opt %S/fuse-lockstep-walks.mlir --split-input-file --nerve-fuse-kernel-loops --nerve-gpu-select-strategy | FileCheck %s --check-prefix=FUSE_LOCKSTEP_WALKS
// RUN: nerve-opt %S/fuse-reductions.mlir --split-input-file --nerve-fuse-kernel-loops --nerve-gpu-select-strategy | FileCheck %s --check-prefix=FUSE_REDUCTIONS
// RUN: nerve-opt %S/lockstep-loops.mlir --split-input-file --nerve-fuse-kernel-loops --nerve-gpu-select-strategy | FileCheck %s --check-prefix=LOCKSTEP_LOOPS
// RUN: nerve-opt %S/parallel-loops.mlir --split-input-file --nerve-fuse-kernel-loops --nerve-gpu-select-strategy | FileCheck %s --check-prefix=PARALLEL_LOOPS
// RUN: nerve-opt %S/reduction.mlir --split-input-file --nerve-fuse-kernel-loops --nerve-gpu-select-strategy | FileCheck %s --check-prefix=REDUCTION
// RUN: nerve-opt %S/row-programs.mlir --split-input-file --nerve-fuse-kernel-loops --nerve-gpu-select-strategy | FileCheck %s --check-prefix=ROW_PROGRAMS
// RUN: nerve-opt %S/row-programs.mlir --split-input-file --nerve-fuse-kernel-loops --nerve-gpu-select-strategy='chip=sm_90' | FileCheck %s --check-prefix=ROW_PROGRAMS_SM90
// RUN: nerve-opt %S/row-programs.mlir --split-input-file --nerve-fuse-kernel-loops --nerve-gpu-select-strategy='chip=sm_89' | FileCheck %s --check-prefix=ROW_PROGRAMS_SM89
// RUN: not nerve-opt %S/row-programs.mlir --nerve-gpu-select-strategy='chip=sm_91' 2>&1 | FileCheck %s --check-prefix=BAD_CHIP
// RUN: nerve-opt %S/split-reductions.mlir --split-input-file --nerve-fuse-kernel-loops --nerve-gpu-select-strategy | FileCheck %s --check-prefix=SPLIT_REDUCTIONS
// RUN: nerve-opt %S/tiled-transpose.mlir --split-input-file --nerve-fuse-kernel-loops --nerve-gpu-select-strategy | FileCheck %s --check-prefix=TILED_TRANSPOSE
// RUN: nerve-opt %S/transposed-staging.mlir --split-input-file --nerve-fuse-kernel-loops --nerve-gpu-select-strategy | FileCheck %s --check-prefix=TRANSPOSED_STAGING
// RUN: nerve-opt %S/vector-lanes.mlir --split-input-file --nerve-fuse-kernel-loops --nerve-gpu-select-strategy | FileCheck %s --check-prefix=VECTOR_LANES
// RUN: nerve-opt %S/warp-rows.mlir --split-input-file --nerve-fuse-kernel-loops --nerve-gpu-select-strategy | FileCheck %s --check-prefix=WARP_ROWS


// coarsen.mlir
// COARSEN: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// COARSEN: gpumap.strategy = #gpumap.strategy<threads, block = 256>
// COARSEN: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// COARSEN-NOT: gpumap.strategy

// fuse-lockstep-walks.mlir
// FUSE_LOCKSTEP_WALKS: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// FUSE_LOCKSTEP_WALKS: gpumap.strategy = #gpumap.strategy<whole_reduction, block = 256>
// FUSE_LOCKSTEP_WALKS: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// FUSE_LOCKSTEP_WALKS: gpumap.strategy = #gpumap.strategy<threads, block = 256>
// FUSE_LOCKSTEP_WALKS: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// FUSE_LOCKSTEP_WALKS: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// FUSE_LOCKSTEP_WALKS: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// FUSE_LOCKSTEP_WALKS: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// FUSE_LOCKSTEP_WALKS: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// FUSE_LOCKSTEP_WALKS: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// FUSE_LOCKSTEP_WALKS: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// FUSE_LOCKSTEP_WALKS: gpumap.strategy = #gpumap.strategy<split_reduction>
// FUSE_LOCKSTEP_WALKS-NOT: gpumap.strategy

// fuse-reductions.mlir
// FUSE_REDUCTIONS: gpumap.strategy = #gpumap.strategy<whole_reduction, block = 256>
// FUSE_REDUCTIONS: gpumap.strategy = #gpumap.strategy<whole_reduction, block = 256>
// FUSE_REDUCTIONS: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// FUSE_REDUCTIONS: gpumap.strategy = #gpumap.strategy<whole_reduction, block = 256>
// FUSE_REDUCTIONS: gpumap.strategy = #gpumap.strategy<split_reduction>
// FUSE_REDUCTIONS: gpumap.strategy = #gpumap.strategy<whole_reduction, block = 256>
// FUSE_REDUCTIONS-NOT: gpumap.strategy

// lockstep-loops.mlir
// LOCKSTEP_LOOPS: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// LOCKSTEP_LOOPS: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// LOCKSTEP_LOOPS: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 8>
// LOCKSTEP_LOOPS: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 8>
// LOCKSTEP_LOOPS: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// LOCKSTEP_LOOPS: gpumap.strategy = #gpumap.strategy<threads, block = 256>
// LOCKSTEP_LOOPS: gpumap.strategy = #gpumap.strategy<threads, block = 256>
// LOCKSTEP_LOOPS: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// LOCKSTEP_LOOPS-NOT: gpumap.strategy

// parallel-loops.mlir
// PARALLEL_LOOPS: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// PARALLEL_LOOPS: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// PARALLEL_LOOPS: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// PARALLEL_LOOPS-NOT: gpumap.strategy

// reduction.mlir
// REDUCTION: gpumap.strategy = #gpumap.strategy<whole_reduction, block = 256>
// REDUCTION: gpumap.strategy = #gpumap.strategy<whole_reduction, block = 256>
// REDUCTION: gpumap.strategy = #gpumap.strategy<whole_reduction, block = 256>
// REDUCTION: gpumap.strategy = #gpumap.strategy<whole_reduction, block = 256>
// REDUCTION: gpumap.strategy = #gpumap.strategy<whole_reduction, block = 256>
// REDUCTION: gpumap.strategy = #gpumap.strategy<whole_reduction, block = 256>
// REDUCTION: gpumap.strategy = #gpumap.strategy<whole_reduction, block = 256>
// REDUCTION: gpumap.strategy = #gpumap.strategy<whole_reduction, block = 256>
// REDUCTION: gpumap.strategy = #gpumap.strategy<whole_fold, block = 256>
// REDUCTION: gpumap.strategy = #gpumap.strategy<whole_fold, block = 256>
// REDUCTION-NOT: gpumap.strategy

// row-programs.mlir
// ROW_PROGRAMS: gpumap.strategy = #gpumap.strategy<row_program, block = 256, loops = 3>
// ROW_PROGRAMS: gpumap.strategy = #gpumap.strategy<row_program, block = 256, loops = 2>
// ROW_PROGRAMS: gpumap.strategy = #gpumap.strategy<row_reductions, block = 256>
// ROW_PROGRAMS: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// ROW_PROGRAMS: gpumap.strategy = #gpumap.strategy<threads, block = 256>
// ROW_PROGRAMS: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// ROW_PROGRAMS-NOT: gpumap.strategy

// With a chip, a row program records its limits: sm_90's opt-in 227 KiB of
// shared memory and clusters of up to 8 blocks; sm_89's 99 KiB and no
// clusters. Other strategies take none.
// ROW_PROGRAMS_SM90: gpumap.strategy = #gpumap.strategy<row_program, block = 256, loops = 3, staging = 232448, cluster = 8>
// ROW_PROGRAMS_SM90: gpumap.strategy = #gpumap.strategy<row_program, block = 256, loops = 2, staging = 232448, cluster = 8>
// ROW_PROGRAMS_SM90: gpumap.strategy = #gpumap.strategy<row_reductions, block = 256>
// ROW_PROGRAMS_SM89: gpumap.strategy = #gpumap.strategy<row_program, block = 256, loops = 3, staging = 101376>
// ROW_PROGRAMS_SM89: gpumap.strategy = #gpumap.strategy<row_program, block = 256, loops = 2, staging = 101376>
// ROW_PROGRAMS_SM89: gpumap.strategy = #gpumap.strategy<row_reductions, block = 256>

// BAD_CHIP: error: unknown chip 'sm_91'; nerve compiles for sm_80, sm_89, sm_90 and sm_100

// split-reductions.mlir
// SPLIT_REDUCTIONS: gpumap.strategy = #gpumap.strategy<split_reduction>
// SPLIT_REDUCTIONS: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// SPLIT_REDUCTIONS: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// SPLIT_REDUCTIONS: gpumap.strategy = #gpumap.strategy<split_reduction>
// SPLIT_REDUCTIONS: gpumap.strategy = #gpumap.strategy<split_reduction>
// SPLIT_REDUCTIONS: gpumap.strategy = #gpumap.strategy<split_reduction>
// SPLIT_REDUCTIONS: gpumap.strategy = #gpumap.strategy<split_reduction>
// SPLIT_REDUCTIONS-NOT: gpumap.strategy

// tiled-transpose.mlir
// TILED_TRANSPOSE: gpumap.strategy = #gpumap.strategy<tiled_transpose, block = 256>
// TILED_TRANSPOSE: gpumap.strategy = #gpumap.strategy<tiled_transpose, block = 256>
// TILED_TRANSPOSE: gpumap.strategy = #gpumap.strategy<tiled_transpose, block = 256>
// TILED_TRANSPOSE: gpumap.strategy = #gpumap.strategy<tiled_transpose, block = 256>
// TILED_TRANSPOSE: gpumap.strategy = #gpumap.strategy<tiled_transpose, block = 256>
// TILED_TRANSPOSE: gpumap.strategy = #gpumap.strategy<threads, block = 256>
// TILED_TRANSPOSE: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// TILED_TRANSPOSE: gpumap.strategy = #gpumap.strategy<threads, block = 256>
// TILED_TRANSPOSE: gpumap.strategy = #gpumap.strategy<threads, block = 256>
// TILED_TRANSPOSE-NOT: gpumap.strategy

// transposed-staging.mlir
// TRANSPOSED_STAGING: gpumap.strategy = #gpumap.strategy<transposed_staging, block = 256>
// TRANSPOSED_STAGING: gpumap.strategy = #gpumap.strategy<transposed_staging, block = 256>
// TRANSPOSED_STAGING: gpumap.strategy = #gpumap.strategy<transposed_staging, block = 256>
// TRANSPOSED_STAGING: gpumap.strategy = #gpumap.strategy<threads, block = 256>
// TRANSPOSED_STAGING: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// TRANSPOSED_STAGING-NOT: gpumap.strategy

// vector-lanes.mlir
// VECTOR_LANES: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// VECTOR_LANES: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 8>
// VECTOR_LANES: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// VECTOR_LANES: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 8>
// VECTOR_LANES: gpumap.strategy = #gpumap.strategy<threads, block = 256, lanes = 4>
// VECTOR_LANES: gpumap.strategy = #gpumap.strategy<threads, block = 256>
// VECTOR_LANES: gpumap.strategy = #gpumap.strategy<tiled_transpose, block = 256>
// VECTOR_LANES: gpumap.strategy = #gpumap.strategy<threads, block = 256>
// VECTOR_LANES: gpumap.strategy = #gpumap.strategy<threads, block = 256>
// VECTOR_LANES: gpumap.strategy = #gpumap.strategy<tiled_transpose, block = 256>
// VECTOR_LANES: gpumap.strategy = #gpumap.strategy<row_reductions, block = 256>
// VECTOR_LANES: gpumap.strategy = #gpumap.strategy<threads, block = 256>
// VECTOR_LANES-NOT: gpumap.strategy

// warp-rows.mlir
// WARP_ROWS: gpumap.strategy = #gpumap.strategy<row_reductions, block = 256>
// WARP_ROWS: gpumap.strategy = #gpumap.strategy<row_reductions, block = 256>
// WARP_ROWS: gpumap.strategy = #gpumap.strategy<split_reduction>
// WARP_ROWS: gpumap.strategy = #gpumap.strategy<threads, block = 256>
// WARP_ROWS: gpumap.strategy = #gpumap.strategy<threads, block = 256>
// WARP_ROWS: gpumap.strategy = #gpumap.strategy<row_reductions, block = 256>
// WARP_ROWS: gpumap.strategy = #gpumap.strategy<row_reductions, block = 256>
// WARP_ROWS-NOT: gpumap.strategy

