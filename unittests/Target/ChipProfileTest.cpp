//===- ChipProfileTest.cpp - the chip table's consistency ------------------===//

#include "nerve/Target/ChipProfile.h"

#include "gtest/gtest.h"

using namespace nerve;

TEST(ChipProfile, EveryChipHasOneRowAndItsNameParsesBack) {
  int last = 0;
  for (const ChipProfile &p : chipProfiles()) {
    EXPECT_EQ(&chipProfile(p.chip), &p);
    EXPECT_EQ(parseChip(p.name), p.chip);
    EXPECT_EQ(p.name, "sm_" + std::to_string(p.computeCapability));
    EXPECT_GT(p.computeCapability, last) << "oldest first";
    last = p.computeCapability;
  }
  EXPECT_EQ(parseChip("sm_91"), std::nullopt);
  EXPECT_EQ(parseChip(""), std::nullopt);
  EXPECT_EQ(chipNames(), "sm_80, sm_89, sm_90 and sm_100");
}

TEST(ChipProfile, LimitsAreCoherent) {
  for (const ChipProfile &p : chipProfiles()) {
    SCOPED_TRACE(p.name.str());
    EXPECT_GE(p.sharedBytesPerBlockOptIn, kSharedBytesWithoutOptIn);
    EXPECT_LE(p.sharedBytesPerBlockOptIn, p.sharedBytesPerMultiprocessor);
    EXPECT_GT(p.multiprocessors, 0);
    EXPECT_GE(p.l2Bytes, 32ll << 20);
    EXPECT_EQ(p.registersPerMultiprocessor, 65536);
    EXPECT_EQ(p.maxThreadsPerBlock, 1024);
    // Clusters and programmatic dependent launch came with sm_90.
    EXPECT_EQ(p.maxClusterBlocks > 0, p.computeCapability >= 90);
    EXPECT_EQ(p.programmaticDependentLaunch, p.computeCapability >= 90);
  }
  EXPECT_EQ(chipProfile(GpuChip::sm_90).sharedBytesPerBlockOptIn, 227 * 1024);
  EXPECT_EQ(chipProfile(GpuChip::sm_90).maxClusterBlocks, 8);
}

TEST(ChipProfile, ALocalGPUGetsTheNewestChipItRuns) {
  EXPECT_EQ(chipForComputeCapability(75), std::nullopt);
  EXPECT_EQ(chipForComputeCapability(80), GpuChip::sm_80);
  EXPECT_EQ(chipForComputeCapability(86), GpuChip::sm_80);
  EXPECT_EQ(chipForComputeCapability(89), GpuChip::sm_89);
  EXPECT_EQ(chipForComputeCapability(90), GpuChip::sm_90);
  EXPECT_EQ(chipForComputeCapability(100), GpuChip::sm_100);
  EXPECT_EQ(chipForComputeCapability(120), GpuChip::sm_100);
}
