//===- SplitReductionHeuristicsTest.cpp - a split reduction's sizes --------===//
//
// The split reduction's heuristics are a pure function of the fold's
// vector lanes: these pin the sizes and the relations its launches rely on.
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/GPUMap/Heuristics/SplitReduction.h"

#include "gtest/gtest.h"

using namespace nerve::gpumap;

namespace {

TEST(SplitReductionHeuristics, TheFirstLaunchAimsAt128KThreadsOfVectors) {
  // f32 columns by vectors (4 a vector), 16-bit columns (8): 128K threads.
  EXPECT_EQ(tuneSplitReduction({4}).columnsAimedAt, 4 * 128 * 1024);
  EXPECT_EQ(tuneSplitReduction({8}).columnsAimedAt, 8 * 128 * 1024);
  // A column a thread: 256K threads.
  EXPECT_EQ(tuneSplitReduction({1}).columnsAimedAt, 256 * 1024);
}

TEST(SplitReductionHeuristics, TheLaunchesFitTheirBlocks) {
  for (int64_t lanes : {1, 2, 4, 8}) {
    SCOPED_TRACE(lanes);
    SplitReductionTuning t = tuneSplitReduction({lanes});
    // The first launch: a warp a chunk of a group, a tile a warp wide.
    EXPECT_EQ(t.partialThreads, 32 * t.groupChunks);
    EXPECT_EQ(t.tileWidth * t.groupChunks, t.partialThreads);
    EXPECT_LE(t.partialThreads, 1024);
    // The second: slices that divide its block, many or few.
    EXPECT_EQ(t.combineThreads % t.manySlices, 0);
    EXPECT_EQ(t.combineThreads % t.fewSlices, 0);
    EXPECT_GT(t.manySlices, t.fewSlices);
    EXPECT_LE(t.combineThreads, 1024);
    EXPECT_GE(t.minChunk, t.rowsInFlight);
    EXPECT_GE(t.groupsPerSlice, 1);
  }
  SplitReductionTuning t = tuneSplitReduction({4});
  EXPECT_EQ(t.minChunk, 64);
  EXPECT_EQ(t.rowsInFlight, 8);
  EXPECT_EQ(t.groupChunks, 8);
  EXPECT_EQ(t.combineThreads, 256);
  EXPECT_EQ(t.manySlices, 32);
  EXPECT_EQ(t.fewSlices, 4);
}

} // namespace
