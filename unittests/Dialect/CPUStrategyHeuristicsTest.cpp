//===- CPUStrategyHeuristicsTest.cpp - the CPU target's task sizes --------===//

#include "nerve/Dialect/CPUMap/Heuristics/CPUStrategy.h"

#include "gtest/gtest.h"

using namespace nerve::cpumap;

namespace {

TEST(CPUStrategyHeuristics, TimeChunksFitHalfOfL1) {
  CPUProfile avx512{64, 48 * 1024};
  // One f32 state: 24 KiB / 4 B = 6144 neurons, capped at 1024.
  EXPECT_EQ(chooseTimeChunk(4, avx512), 1024);
  // Six f32 values an iteration (AdEx's states and crossing values): 1024.
  EXPECT_EQ(chooseTimeChunk(24, avx512), 1024);
  // Eighty bytes an iteration: 24576 / 80 = 307, a multiple of 8 below.
  EXPECT_EQ(chooseTimeChunk(80, avx512), 304);
  // Never fewer than four vectors of f32 lanes.
  EXPECT_EQ(chooseTimeChunk(4096, avx512), 64);
  CPUProfile small{16, 4096};
  EXPECT_EQ(chooseTimeChunk(4096, small), 16);
  for (int64_t bytes : {1, 3, 7, 12, 100, 1000, 100000}) {
    int64_t chunk = chooseTimeChunk(bytes, avx512);
    EXPECT_EQ(chunk % 8, 0) << bytes;
    EXPECT_GE(chunk, 8) << bytes;
    EXPECT_LE(chunk, 1024) << bytes;
  }
}

TEST(CPUStrategyHeuristics, ReductionBlocksAre16KiB) {
  EXPECT_EQ(chooseReductionChunk(4), 4096);
  EXPECT_EQ(chooseReductionChunk(8), 2048);
  EXPECT_EQ(chooseReductionChunk(2), 8192);
  EXPECT_EQ(chooseReductionChunk(0), 16384);
}

TEST(CPUStrategyHeuristics, FoldLanesAreTwoVectorsOfF32) {
  EXPECT_EQ(chooseFoldLanes({64, 32768}), 32);
  EXPECT_EQ(chooseFoldLanes({32, 32768}), 16);
  EXPECT_EQ(chooseFoldLanes({16, 32768}), 8);
}

TEST(CPUStrategyHeuristics, RecurrencesAlongIterationsRunInChunks) {
  // Time-major neurons: every access follows the neurons.
  EXPECT_TRUE(prefersTimeChunks({3, 0}));
  // A row's fold, a time-minor neuron: accesses follow the recurrence.
  EXPECT_FALSE(prefersTimeChunks({0, 2}));
  EXPECT_FALSE(prefersTimeChunks({2, 1}));
  // No access at all: nothing to gain from chunks.
  EXPECT_FALSE(prefersTimeChunks({0, 0}));
}

TEST(CPUStrategyHeuristics, ProfilesRoundTripAsText) {
  CPUProfile p{32, 49152};
  EXPECT_EQ(formatCPUProfile(p), "vector=32,l1=49152");
  CPUProfile q;
  ASSERT_TRUE(parseCPUProfile("vector=64,l1=32768", q));
  EXPECT_EQ(q.vectorBytes, 64);
  EXPECT_EQ(q.l1Bytes, 32768);
  EXPECT_FALSE(parseCPUProfile("vector=24,l1=32768", q));
  EXPECT_FALSE(parseCPUProfile("vector=32,l1=100", q));
  EXPECT_FALSE(parseCPUProfile("vector=32,l1=32768,", q));
  EXPECT_FALSE(parseCPUProfile("", q));
  CPUProfile host = hostCPUProfile();
  EXPECT_TRUE(host.vectorBytes == 16 || host.vectorBytes == 32 || host.vectorBytes == 64);
  EXPECT_GE(host.l1Bytes, 4096);
}

} // namespace
