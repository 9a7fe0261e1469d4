//===- SplitReduction.h - how a split reduction is sized ---------*- C++ -*-===//
//
// The split reduction's heuristics (a fold along an outer dimension, a
// column sum: chunks of rows folded by a first launch, combined by a
// second), as a pure function of what the compiler knows of the fold. The
// numbers were tuned on an H200 and depend on no chip fact yet (what each
// measured is in SplitReduction.cpp and docs/decisions.md).
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_DIALECT_GPUMAP_HEURISTICS_SPLITREDUCTION_H
#define NERVE_DIALECT_GPUMAP_HEURISTICS_SPLITREDUCTION_H

#include <cstdint>

namespace nerve::gpumap {

/// What the compiler knows of a split reduction before it builds it.
struct SplitReductionShape {
  /// Columns a 16-byte vector of its loads holds (1: a column a thread).
  int64_t vectorLanes = 1;
};

/// How a split reduction's two launches are sized.
struct SplitReductionTuning {
  /// Columns the first launch aims for in all (threads times the columns
  /// a thread folds): its chunk count is this over the columns.
  int64_t columnsAimedAt = 0;
  /// Rows a chunk keeps at least.
  int64_t minChunk = 0;
  /// Rows of a chunk whose loads a thread issues together, then folds in
  /// order.
  int64_t rowsInFlight = 0;
  /// Chunks a block of the first launch merges (a warp each), and its
  /// threads; vectors of columns a tile of it has (a warp's).
  int64_t groupChunks = 0, partialThreads = 0, tileWidth = 0;
  /// The second launch: its threads a block, the slices a column's
  /// partials are split over when the groups are many or few, and the
  /// groups a slice takes at least for `manySlices` to be chosen.
  int64_t combineThreads = 0, manySlices = 0, fewSlices = 0, groupsPerSlice = 0;
};

/// The sizes of a split reduction of `shape`.
SplitReductionTuning tuneSplitReduction(const SplitReductionShape &shape);

} // namespace nerve::gpumap

#endif // NERVE_DIALECT_GPUMAP_HEURISTICS_SPLITREDUCTION_H
