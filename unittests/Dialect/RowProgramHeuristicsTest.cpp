//===- RowProgramHeuristicsTest.cpp - a row program's sizes ----------------===//
//
// The row program's heuristics are pure functions of its shape and the
// chip's limits: these pin what each chip and shape gets.
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/GPUMap/Heuristics/RowProgram.h"

#include "gtest/gtest.h"

using namespace nerve;
using namespace nerve::gpumap;

namespace {

/// softmax over f32 rows: one staged input, 4 columns a vector.
RowProgramShape softmaxF32() {
  RowProgramShape s;
  s.lanes = 4;
  s.stagedInputs = 1;
  s.stagedBytesPerColumn = 4;
  return s;
}

TEST(RowProgramHeuristics, LimitsComeFromTheChip) {
  RowProgramLimits none = rowProgramLimits(nullptr);
  EXPECT_EQ(none.stagingBytes, kSharedBytesWithoutOptIn);
  EXPECT_EQ(none.clusterBlocks, 0);
  for (const ChipProfile &chip : chipProfiles()) {
    SCOPED_TRACE(chip.name.str());
    RowProgramLimits limits = rowProgramLimits(&chip);
    EXPECT_EQ(limits.stagingBytes, chip.sharedBytesPerBlockOptIn);
    // Clusters where the chip has them, at most the portable 8 blocks.
    EXPECT_EQ(limits.clusterBlocks, chip.maxClusterBlocks > 1 ? 8 : 0);
  }
  EXPECT_EQ(rowProgramLimits(&chipProfile(GpuChip::sm_89)).stagingBytes, 99 * 1024);
}

TEST(RowProgramHeuristics, StagingHoldsWholeGroupsOf16Columns) {
  RowProgramLimits h100{227 * 1024, 8};
  RowProgramTuning t = tuneRowProgram(softmaxF32(), h100);
  // 1 KiB is kept for the reductions' scratch.
  EXPECT_EQ(t.stagingBytes, 226 * 1024);
  EXPECT_EQ(t.fitColumns, 57856);
  EXPECT_EQ(t.soloStagingBytes, 113 * 1024);
  // Three f16 inputs: 6 bytes a column, rounded down to 16 columns.
  RowProgramShape three = softmaxF32();
  three.lanes = 8;
  three.stagedInputs = 3;
  three.stagedBytesPerColumn = 6;
  RowProgramTuning t3 = tuneRowProgram(three, h100);
  EXPECT_EQ(t3.fitColumns % 16, 0);
  EXPECT_LE(t3.fitColumns * 6, t3.stagingBytes);
  EXPECT_GT((t3.fitColumns + 16) * 6, t3.stagingBytes);
  // Nothing staged: no columns to fit.
  RowProgramShape none;
  EXPECT_EQ(tuneRowProgram(none, h100).fitColumns, 0);
}

TEST(RowProgramHeuristics, TheLimitsNeverGoBelowWhatNeedsNoOptIn) {
  RowProgramTuning t = tuneRowProgram(softmaxF32(), RowProgramLimits{1024, 0});
  EXPECT_EQ(t.stagingBytes, kSharedBytesWithoutOptIn - 1024);
}

TEST(RowProgramHeuristics, ClustersArePowersOfTwoUpToEight) {
  EXPECT_EQ(tuneRowProgram(softmaxF32(), {227 * 1024, 16}).clusterBlocks, 8);
  EXPECT_EQ(tuneRowProgram(softmaxF32(), {227 * 1024, 6}).clusterBlocks, 4);
  EXPECT_EQ(tuneRowProgram(softmaxF32(), {227 * 1024, 1}).clusterBlocks, 0);
  EXPECT_EQ(tuneRowProgram(softmaxF32(), {227 * 1024, 0}).clusterBlocks, 0);
}

TEST(RowProgramHeuristics, ThreadsAimAt64BytesInFlight) {
  RowProgramLimits limits;
  // By vectors: 4 vectors of 16 bytes a thread whatever the element type.
  EXPECT_EQ(tuneRowProgram(softmaxF32(), limits).columnsPerThread, 16);
  RowProgramShape f16 = softmaxF32();
  f16.lanes = 8;
  f16.stagedBytesPerColumn = 2;
  EXPECT_EQ(tuneRowProgram(f16, limits).columnsPerThread, 32);
  // By elements only: 8 a thread.
  RowProgramShape scalar = softmaxF32();
  scalar.lanes = 1;
  EXPECT_EQ(tuneRowProgram(scalar, limits).columnsPerThread, 8);
  RowProgramTuning t = tuneRowProgram(softmaxF32(), limits);
  EXPECT_EQ(t.maxThreads, 256);
  EXPECT_EQ(t.maxThreadsLargeStaging, 512);
  EXPECT_EQ(t.soloThreads, 1024);
  EXPECT_EQ(t.clusterThreads, 256);
}

TEST(RowProgramHeuristics, RowsStayInRegistersUpTo64ValuesAThread) {
  RowProgramLimits limits;
  // f32 softmax: 16 values a thread; f16 softmax: 32.
  EXPECT_TRUE(tuneRowProgram(softmaxF32(), limits).rowInRegisters);
  RowProgramShape f16 = softmaxF32();
  f16.lanes = 8;
  f16.stagedBytesPerColumn = 2;
  EXPECT_TRUE(tuneRowProgram(f16, limits).rowInRegisters);
  // f32 layer_norm (x, weight, bias: 48) stays; 16-bit layer_norm (96)
  // does not.
  RowProgramShape layerNorm = softmaxF32();
  layerNorm.otherLoads = 2;
  EXPECT_TRUE(tuneRowProgram(layerNorm, limits).rowInRegisters);
  layerNorm.lanes = 8;
  layerNorm.stagedBytesPerColumn = 2;
  EXPECT_FALSE(tuneRowProgram(layerNorm, limits).rowInRegisters);
  // Not by elements, nor without a staged input.
  RowProgramShape scalar = softmaxF32();
  scalar.lanes = 1;
  EXPECT_FALSE(tuneRowProgram(scalar, limits).rowInRegisters);
  RowProgramShape unstaged = softmaxF32();
  unstaged.stagedInputs = 0;
  unstaged.stagedBytesPerColumn = 0;
  EXPECT_FALSE(tuneRowProgram(unstaged, limits).rowInRegisters);
}

TEST(RowProgramHeuristics, ProgramsLoadingMoreClusterOnlyRowsTooWide) {
  RowProgramLimits h100{227 * 1024, 8};
  RowProgramTuning softmax = tuneRowProgram(softmaxF32(), h100);
  EXPECT_FALSE(softmax.clusterOnlyTooWide);
  EXPECT_EQ(softmax.clusterBlocksPerSM, 5);
  EXPECT_EQ(softmax.fiveAnSMSliceBytes, 0);
  RowProgramShape layerNorm = softmaxF32();
  layerNorm.otherLoads = 2;
  RowProgramTuning t = tuneRowProgram(layerNorm, h100);
  EXPECT_TRUE(t.clusterOnlyTooWide);
  EXPECT_EQ(t.clusterBlocksPerSM, 4);
  // f32: slices five blocks of which fit an SM get a kernel of their own.
  EXPECT_EQ(t.fiveAnSMSliceBytes, 40 * 1024);
  EXPECT_EQ(t.fiveAnSMBlocksPerSM, 5);
  EXPECT_LE(5 * (t.fiveAnSMSliceBytes + kRowScratchBytes),
            chipProfile(GpuChip::sm_90).sharedBytesPerMultiprocessor);
  layerNorm.stagedBytesPerColumn = 2;
  EXPECT_EQ(tuneRowProgram(layerNorm, h100).fiveAnSMSliceBytes, 0);
}

} // namespace
