//===- TiledTransposeHeuristicsTest.cpp - a tiled transpose's sizes --------===//
//
// The tiled transpose's heuristics are pure functions of element sizes and
// staged inputs: these pin the sizes and what its kernels rely on (whole
// tiles a pass, rings within every chip's shared memory).
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/GPUMap/Heuristics/TiledTranspose.h"
#include "nerve/Target/ChipProfile.h"

#include "gtest/gtest.h"

using namespace nerve;
using namespace nerve::gpumap;

namespace {

TEST(TiledTransposeHeuristics, ScalarTilesAreLinesOf128Bytes) {
  EXPECT_EQ(scalarTileSide(8), 16);
  EXPECT_EQ(scalarTileSide(4), 32);
  EXPECT_EQ(scalarTileSide(2), 64);
  EXPECT_EQ(scalarTileSide(1), 64); // at most 64
  EXPECT_EQ(scalarTileSide(16), 16); // at least 16
  // A scalar tile is a whole number of passes of the block's threads.
  for (int64_t bytes : {1, 2, 4, 8}) {
    int64_t side = scalarTileSide(bytes);
    EXPECT_EQ(kTileThreads % side, 0);
    EXPECT_EQ(side * side % kTileThreads, 0);
  }
}

TEST(TiledTransposeHeuristics, VectorTilesSplitEvenlyOverThreads) {
  for (int64_t lanes : {4, 8}) {
    SCOPED_TRACE(lanes);
    int64_t perThread = vectorChunksPerThread(lanes);
    int64_t chunks = kVectorTileSide * (kVectorTileSide / lanes);
    EXPECT_EQ(chunks % perThread, 0);
    EXPECT_LE(chunks / perThread, 1024);
  }
  EXPECT_EQ(vectorChunksPerThread(8), 4); // 16-bit: 128 threads
  EXPECT_EQ(vectorChunksPerThread(4), 2); // f32: 512 threads
}

TEST(TiledTransposeHeuristics, RingsFitEveryChip) {
  // One f32 input: three tiles of 16 KiB; one f16 input, three of 8 KiB.
  EXPECT_EQ(vectorTileStages(1, 4), 3);
  EXPECT_EQ(vectorTileStages(1, 8), 3);
  // Two f32 inputs: 96 KiB for three stages, which fit.
  EXPECT_EQ(vectorTileStages(2, 4), 3);
  // Three f32 inputs: two stages; six: none (the scalar form).
  EXPECT_EQ(vectorTileStages(3, 4), 2);
  EXPECT_EQ(vectorTileStages(6, 4), 0);
  for (int64_t inputs = 1; inputs <= 8; ++inputs)
    for (int64_t lanes : {4, 8}) {
      int64_t stages = vectorTileStages(inputs, lanes);
      int64_t bytes = stages * inputs * kVectorTileSide * kVectorTileSide * (16 / lanes);
      for (const ChipProfile &chip : chipProfiles())
        EXPECT_LE(bytes, chip.sharedBytesPerBlockOptIn) << chip.name.str();
    }
}

TEST(TiledTransposeHeuristics, OnlySixteenBitChunksVectorizeLoadsAlongP) {
  EXPECT_TRUE(loadsAlongPTakeVectors(8, 2));
  EXPECT_TRUE(loadsAlongPTakeVectors(8, 4));
  EXPECT_FALSE(loadsAlongPTakeVectors(4, 4));
  EXPECT_FALSE(loadsAlongPTakeVectors(8, 8));
  EXPECT_FALSE(loadsAlongPTakeVectors(8, 1));
}

} // namespace
