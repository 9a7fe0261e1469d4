//===- SplitReduction.cpp - how a split reduction is sized ---------------===//
//
// The split reduction's sizes. Each number says why it is what it is
// (H200 measurements; more in docs/decisions.md, under "Compiler": folds
// along an outer dimension split into chunks, and the split reductions'
// entries after it).
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/GPUMap/Heuristics/SplitReduction.h"

using namespace nerve::gpumap;

namespace {
constexpr int64_t kWarp = 32;
/// Threads of the first launch: 128K of a 16-byte vector of columns each
/// (eight loads in flight: 16 MiB over the GPU). At 4096 x 65536, 256K
/// 16-bit threads gave 82.7% of the copy bandwidth, 128K 87.4%; 64K f32
/// threads 93.6%, 128K 98.4%. Without a vector form, 256K threads of a
/// column each.
constexpr int64_t kVectorThreads = 128 * 1024;
constexpr int64_t kScalarThreads = 256 * 1024;
/// Fewer rows a chunk would make the second launch the larger one.
constexpr int64_t kMinChunk = 64;
/// f16 column sums: 4 rows 61.8 / 63.1 / 91.2% of the copy bandwidth at
/// 65536 x 1024 / 16384 x 4096 / 4096 x 65536, 8 rows 63.3 / 64.6 / 92.4%
/// (f32 the same either way); 8 rows with half the threads lost 3-9 points.
constexpr int64_t kRowsInFlight = 8;
/// Merging 8 chunks in a block leaves the second launch 8 times fewer
/// partials to read and combine.
constexpr int64_t kGroupChunks = 8;
/// Tall matrices have hundreds of partials a column: 32 slices of 8
/// columns (32-byte sectors a warp). Wide ones have few (4096 x 65536: 8-16
/// chunks): with 32 slices most had nothing to fold (15.6 us of a 16-bit
/// column sum's 141); 4 slices of 64 columns take them in 4.6 us. A slice
/// count chosen at run time cost tall matrices 1-2 us, hence two launches.
constexpr int64_t kCombineThreads = 256;
constexpr int64_t kManySlices = 32;
constexpr int64_t kFewSlices = 4;
constexpr int64_t kGroupsPerSlice = 4;
} // namespace

SplitReductionTuning nerve::gpumap::tuneSplitReduction(const SplitReductionShape &shape) {
  SplitReductionTuning t;
  t.columnsAimedAt = shape.vectorLanes > 1 ? kVectorThreads * shape.vectorLanes : kScalarThreads;
  t.minChunk = kMinChunk;
  t.rowsInFlight = kRowsInFlight;
  t.groupChunks = kGroupChunks;
  t.partialThreads = kGroupChunks * kWarp;
  t.tileWidth = t.partialThreads / kGroupChunks;
  t.combineThreads = kCombineThreads;
  t.manySlices = kManySlices;
  t.fewSlices = kFewSlices;
  t.groupsPerSlice = kGroupsPerSlice;
  return t;
}
