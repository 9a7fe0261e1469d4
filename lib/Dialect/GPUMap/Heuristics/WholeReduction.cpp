//===- WholeReduction.cpp - how a whole-tensor reduction is sized --------===//
//
// The whole-tensor reduction's sizes, each with the measurement behind it
// (H200; more in docs/decisions.md, under "Compiler": whole-tensor
// reductions load ahead, and go by rows when rows are long).
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/GPUMap/Heuristics/WholeReduction.h"

using namespace nerve::gpumap;

namespace {
/// Eight iterations' loads in flight a thread before they are folded in
/// order; four 16-byte chunks a buffer a thread by chunks.
constexpr int64_t kStridedLoadsAhead = 8;
constexpr int64_t kChunksAhead = 4;
/// Rows of 128 elements or more (four loads of a row a lane of a warp),
/// 2^21 elements or more in all: below, the row pass's third launch costs
/// more than it saves (f32 sums: 1024 x 1024 9.6 us as it stands, 10.1 by
/// rows; 256 x 1024 8.0 against 9.2).
constexpr int64_t kMinRowLength = 4 * 32;
constexpr int64_t kMinRowsElements = int64_t(1) << 21;
} // namespace

WholeReductionTuning nerve::gpumap::tuneWholeReduction() {
  WholeReductionTuning t;
  t.stridedLoadsAhead = kStridedLoadsAhead;
  t.chunksAhead = kChunksAhead;
  t.minRowLength = kMinRowLength;
  t.minRowsElements = kMinRowsElements;
  return t;
}
