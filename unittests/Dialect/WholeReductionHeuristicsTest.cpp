//===- WholeReductionHeuristicsTest.cpp - a whole reduction's sizes --------===//

#include "nerve/Dialect/GPUMap/Heuristics/WholeReduction.h"

#include "gtest/gtest.h"

using namespace nerve::gpumap;

namespace {

TEST(WholeReductionHeuristics, LoadsAheadAndRowsFirst) {
  WholeReductionTuning t = tuneWholeReduction();
  EXPECT_EQ(t.stridedLoadsAhead, 8);
  EXPECT_EQ(t.chunksAhead, 4);
  // By rows: rows of four loads a lane of a warp at least, 2^21 elements.
  EXPECT_EQ(t.minRowLength, 4 * 32);
  EXPECT_EQ(t.minRowsElements, int64_t(1) << 21);
  // The row pass's rows are at least a warp's lanes' loads, and there are
  // many of them.
  EXPECT_GE(t.minRowsElements / t.minRowLength, 1024);
}

} // namespace
