//===- RowProgram.h - how a row program is sized -----------------*- C++ -*-===//
//
// The row program's heuristics (softmax, layer_norm: a block a row, the row
// staged in shared memory), as pure functions over what the compiler knows
// of the program and the chip: nerve-gpu-select-strategy records the chip's
// part in the #gpumap.strategy (`staging`, `cluster`), and the mapping reads
// the rest from here. The constants were tuned on an H200; the measurements
// behind each are in docs/decisions.md.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_DIALECT_GPUMAP_HEURISTICS_ROWPROGRAM_H
#define NERVE_DIALECT_GPUMAP_HEURISTICS_ROWPROGRAM_H

#include "nerve/Target/ChipProfile.h"

#include <cstdint>

namespace nerve::gpumap {

/// What a chip lets a row program's block take: the shared memory it may
/// stage rows in (its opt-in limit) and the most blocks of a thread block
/// cluster that splits a row (0: no cluster form).
struct RowProgramLimits {
  int64_t stagingBytes = kSharedBytesWithoutOptIn;
  int64_t clusterBlocks = 0;
};

/// The limits of `chip`; of no chip in particular (what every CUDA GPU
/// allows without opting in: 48 KiB, no clusters) when it is null.
RowProgramLimits rowProgramLimits(const ChipProfile *chip);

/// What the compiler knows of a row program before it builds it.
struct RowProgramShape {
  /// Columns a 16-byte vector of its rows holds (1: by elements only).
  int64_t lanes = 1;
  /// Inputs staged in shared memory, and their bytes a column together.
  int64_t stagedInputs = 0;
  int64_t stagedBytesPerColumn = 0;
  /// Loads of the elementwise pass from neither a staged input nor the row
  /// statistics (layer_norm's weight and bias).
  int64_t otherLoads = 0;
};

/// How a row program's kernels are sized: compile-time numbers, of which
/// the run-time choices (by row width) are made.
struct RowProgramTuning {
  /// Shared memory the staged inputs may take (the limit less the
  /// reductions' scratch), and the columns it holds (a multiple of 16).
  int64_t stagingBytes = 0;
  int64_t fitColumns = 0;
  /// A block whose staging takes more than this runs alone on its SM.
  int64_t soloStagingBytes = 0;
  /// Most blocks of a cluster, a power of two (0: no cluster form).
  int64_t clusterBlocks = 0;
  /// Columns a thread of the program's widest form aims for (by vectors:
  /// kRowVectorsPerThread vectors; else elementsPerThread), all loaded at
  /// once by the first pass; elements a thread of the form by elements
  /// loads at once.
  int64_t columnsPerThread = 0, elementsPerThread = 0;
  /// Most threads of a block; of one that stages more than 48 KiB; of a
  /// block alone on its SM; of a block of a cluster.
  int64_t maxThreads = 0, maxThreadsLargeStaging = 0, soloThreads = 0, clusterThreads = 0;
  /// Warps a block of rows shorter than a warp's loads.
  int64_t groupWarpsPerBlock = 0;
  /// Whether vector kernels with few vectors a thread keep the row in
  /// registers instead of shared memory (the register form).
  bool rowInRegisters = false;
  /// Whether clusters split only rows too wide for a block's staging (the
  /// elementwise pass loads more than the staged rows).
  bool clusterOnlyTooWide = false;
  /// A cluster's blocks take slices of at most this many bytes where the
  /// cluster size allows.
  int64_t clusterSliceBytes = 0;
  /// Blocks of a cluster kernel ptxas is asked to fit on an SM.
  int64_t clusterBlocksPerSM = 0;
  /// f32 programs loading more: slices of at most this many bytes get a
  /// kernel of their own (0: none), which asks for this many blocks an SM.
  int64_t fiveAnSMSliceBytes = 0, fiveAnSMBlocksPerSM = 0;
  /// Clusters of a launch: one a row up to clusterRowsAlone rows, beyond
  /// that each walks up to rowsPerCluster rows.
  int64_t clusterRowsAlone = 0, rowsPerCluster = 0;
};

/// The sizes of a row program of `shape` within `limits`.
RowProgramTuning tuneRowProgram(const RowProgramShape &shape, const RowProgramLimits &limits);

/// Vectors of a row a thread of the vector form aims for, loaded at once.
constexpr int64_t kRowVectorsPerThread = 4;
/// Columns a thread takes a step in the elementwise pass.
constexpr int64_t kRowUnroll = 4;
/// Shared memory kept for the reductions' scratch (32 values per type).
constexpr int64_t kRowScratchBytes = 1024;

} // namespace nerve::gpumap

#endif // NERVE_DIALECT_GPUMAP_HEURISTICS_ROWPROGRAM_H
