//===- ContractTilingHeuristicsTest.cpp - tensor-core tilings -------------===//
//
// The tiling heuristic is a pure function of a contraction's shape facts
// and the chip: these pin which contractions take tensor cores, which take
// IEEE f32 fused multiply-adds, which instructions each chip gets, and that
// every tiling it returns is one the lowering takes and the chip's shared
// memory holds.
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/GPUMap/Heuristics/ContractTiling.h"
#include "nerve/Target/ChipProfile.h"

#include "gtest/gtest.h"

#include <string>

using namespace nerve;
using namespace nerve::gpumap;

namespace {

ContractShape linearLayer(ContractElement e) {
  ContractShape s;
  s.lhs = s.rhs = s.output = e;
  s.rowDims = s.columnDims = s.contractedDims = 1;
  s.lhsUnitStride = s.rhsUnitStride = s.outputUnitStride = true;
  return s;
}

TEST(ContractTilingHeuristics, SixteenBitMatricesTakeTensorCores) {
  for (const ChipProfile &chip : chipProfiles())
    for (ContractElement e : {ContractElement::f16, ContractElement::bf16}) {
      SCOPED_TRACE(chip.name.str());
      std::optional<ContractTiling> t = chooseContractTiling(linearLayer(e), chip);
      ASSERT_TRUE(t);
      EXPECT_STREQ(contractTilingProblem(*t), "");
      EXPECT_LE(contractSharedBytes(*t), chip.sharedBytesPerBlockOptIn);
      // wgmma exactly where the chip has its architecture-specific target.
      EXPECT_EQ(t->instruction == MmaFamily::wgmma, !chip.archSpecificName.empty());
    }
}

TEST(ContractTilingHeuristics, F32TakesFusedMultiplyAdds) {
  for (const ChipProfile &chip : chipProfiles()) {
    SCOPED_TRACE(chip.name.str());
    std::optional<ContractTiling> t = chooseContractTiling(linearLayer(ContractElement::f32), chip);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->instruction, MmaFamily::fma);
    EXPECT_STREQ(contractTilingProblem(*t), "");
    // Two blocks an SM: their rings fit the SM's shared memory.
    EXPECT_LE(kFmaBlocksPerSM * contractSharedBytes(*t), chip.sharedBytesPerMultiprocessor);
    EXPECT_EQ(t->warpsM * t->warpsN * 32, 256);
    // A lane's tile of 8 x 8: 64 accumulators.
    EXPECT_EQ((t->tileM / t->warpsM / kFmaLanesM) * (t->tileN / t->warpsN / kFmaLanesN), 64);
  }
  ContractShape few = linearLayer(ContractElement::f32);
  few.rows = 40;
  std::optional<ContractTiling> t = chooseContractTiling(few, chipProfile(GpuChip::sm_90));
  EXPECT_EQ(t->tileM, 64);
  EXPECT_STREQ(contractTilingProblem(*t), "");
  // Padded rows: 3 stages of (128 + 4) x 16 f32 of each operand.
  EXPECT_EQ(contractSharedBytes({MmaFamily::fma, 128, 128, 16, 4, 2, 3}), 3 * 264 * 16 * 4);
  ContractShape scan = linearLayer(ContractElement::f32);
  scan.rowDims = 2;
  scan.rowsMerge = scan.scans = scan.scanIsOuterRow = scan.lhsKMajor = true;
  scan.carried = 2;
  std::optional<ContractTiling> st = chooseContractTiling(scan, chipProfile(GpuChip::sm_80));
  ASSERT_TRUE(st);
  EXPECT_EQ(st->instruction, MmaFamily::fma);
  EXPECT_EQ(contractScanSharedBytes(*st, 2), 128 * 128 * 4 + 2 * 128 * 4);
}

TEST(ContractTilingHeuristics, Tf32OnlyWhereAllowedOnWgmma) {
  ContractShape s = linearLayer(ContractElement::f32);
  ContractPermissions tf32;
  tf32.tf32 = true;
  const ChipProfile &sm90 = chipProfile(GpuChip::sm_90);
  EXPECT_EQ(chooseContractTiling(s, sm90)->instruction, MmaFamily::fma); // IEEE by default
  std::optional<ContractTiling> t = chooseContractTiling(s, sm90, tf32);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->instruction, MmaFamily::wgmmaTf32);
  EXPECT_EQ(t->tileK, 32); // 128-byte rows of f32
  EXPECT_STREQ(contractTilingProblem(*t), "");
  EXPECT_EQ(contractSharedBytes(*t), 4 * (128 + 256) * 32 * 4 + 1024);
  // Chips without wgmma take mma.sync's m16n8k8 tf32, in the shared memory
  // they have.
  for (GpuChip c : {GpuChip::sm_80, GpuChip::sm_89}) {
    std::optional<ContractTiling> m = chooseContractTiling(s, chipProfile(c), tf32);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->instruction, MmaFamily::mmaSyncTf32);
    EXPECT_STREQ(contractTilingProblem(*m), "");
    EXPECT_LE(contractSharedBytes(*m), chipProfile(c).sharedBytesPerBlockOptIn);
  }
  // 16-bit operands are unaffected.
  ContractShape half = linearLayer(ContractElement::f16);
  EXPECT_EQ(chooseContractTiling(half, sm90, tf32)->instruction, MmaFamily::wgmma);
  ContractTiling wrongK = *t;
  wrongK.tileK = 64;
  EXPECT_NE(std::string(contractTilingProblem(wrongK)), "");
}

TEST(ContractTilingHeuristics, GeneralLoopsKeepTheRest) {
  const ChipProfile &chip = chipProfile(GpuChip::sm_90);
  ContractShape f32 = linearLayer(ContractElement::f32);
  f32.rhs = ContractElement::f16;
  EXPECT_FALSE(chooseContractTiling(f32, chip));
  ContractShape mixed = linearLayer(ContractElement::f16);
  mixed.rhs = ContractElement::bf16;
  EXPECT_FALSE(chooseContractTiling(mixed, chip));
  ContractShape batched = linearLayer(ContractElement::f16);
  batched.batchDims = 1;
  EXPECT_FALSE(chooseContractTiling(batched, chip));
  ContractShape twoRowDims = linearLayer(ContractElement::f16);
  twoRowDims.rowDims = 2;
  EXPECT_FALSE(chooseContractTiling(twoRowDims, chip));
  twoRowDims.rowsMerge = true; // [t, b, k] x [j, k] over row-major buffers
  EXPECT_TRUE(chooseContractTiling(twoRowDims, chip));
  ContractShape strided = linearLayer(ContractElement::bf16);
  strided.rhsUnitStride = false;
  EXPECT_FALSE(chooseContractTiling(strided, chip));
}

TEST(ContractTilingHeuristics, StagesFollowTheSharedMemory) {
  // Two blocks' rings fit sm_80's 164 KiB at four stages, not sm_89's 100.
  ContractShape s = linearLayer(ContractElement::f16);
  EXPECT_EQ(chooseContractTiling(s, chipProfile(GpuChip::sm_80))->stages, 4);
  EXPECT_EQ(chooseContractTiling(s, chipProfile(GpuChip::sm_89))->stages, 3);
  std::optional<ContractTiling> w = chooseContractTiling(s, chipProfile(GpuChip::sm_90));
  EXPECT_EQ(w->tileM, 128);
  EXPECT_EQ(w->tileN, 256);
  EXPECT_EQ(contractSharedBytes(*w), 4 * (128 + 256) * 64 * 2 + 1024);
}

TEST(ContractTilingHeuristics, FewStaticRowsTakeHalfTiles) {
  ContractShape s = linearLayer(ContractElement::f16);
  s.rows = 40;
  for (const ChipProfile &chip : chipProfiles()) {
    std::optional<ContractTiling> t = chooseContractTiling(s, chip);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->tileM, 64);
    EXPECT_STREQ(contractTilingProblem(*t), "");
  }
}

TEST(ContractTilingHeuristics, ProblemsNameWhatTheLoweringNeeds) {
  ContractTiling ok{MmaFamily::mmaSync, 128, 128, 32, 2, 2, 4};
  EXPECT_STREQ(contractTilingProblem(ok), "");
  ContractTiling k48 = ok;
  k48.tileK = 48;
  EXPECT_NE(std::string(contractTilingProblem(k48)), "");
  ContractTiling wg{MmaFamily::wgmma, 128, 256, 64, 8, 1, 4};
  EXPECT_STREQ(contractTilingProblem(wg), "");
  wg.stages = 2; // the copies run two tiles behind the products
  EXPECT_NE(std::string(contractTilingProblem(wg)), "");
  ContractTiling fma{MmaFamily::fma, 128, 128, 16, 4, 2, 3};
  EXPECT_STREQ(contractTilingProblem(fma), "");
  fma.warpsN = 8; // a warp 16 columns wide: not 4 for each of 8 lanes
  EXPECT_NE(std::string(contractTilingProblem(fma)), "");
}

TEST(ContractTilingHeuristics, ProducerWarpsAreAWarpgroupBesideTwo) {
  ContractTiling wg{MmaFamily::wgmma, 128, 256, 64, 8, 1, 4, kProducerWarps};
  EXPECT_STREQ(contractTilingProblem(wg), "");
  // Each stage's two mbarriers follow the ring.
  EXPECT_EQ(contractSharedBytes(wg), 4 * (128 + 256) * 64 * 2 + 2 * 4 * 8 + 1024);
  ContractTiling two = wg;
  two.producerWarps = 2;
  EXPECT_NE(std::string(contractTilingProblem(two)), "");
  ContractTiling oneGroup = wg;
  oneGroup.tileM = 64;
  oneGroup.warpsM = 4;
  EXPECT_NE(std::string(contractTilingProblem(oneGroup)), "");
  ContractTiling warps{MmaFamily::mmaSync, 128, 128, 32, 2, 2, 4, kProducerWarps};
  EXPECT_NE(std::string(contractTilingProblem(warps)), "");
  // Not chosen: with cp.async copies the block ran slower (decisions.md).
  for (const ChipProfile &chip : chipProfiles()) {
    std::optional<ContractTiling> t =
        chooseContractTiling(linearLayer(ContractElement::f16), chip);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->producerWarps, 0);
  }
}

TEST(ContractTilingHeuristics, StagedRowsAreWhatTheRingHolds) {
  // wgmma: all 128 rows (128 x (256 + 8) f32, 132 KiB of the 192 KiB ring);
  // f32 on tf32 too.
  const ChipProfile &sm90 = chipProfile(GpuChip::sm_90);
  std::optional<ContractTiling> wg = chooseContractTiling(linearLayer(ContractElement::f16), sm90);
  ASSERT_TRUE(wg);
  EXPECT_EQ(wg->stagedRows, 128);
  EXPECT_EQ(contractStagingBytes(*wg), 128 * (256 + kStagedPadAlongN) * 4);
  ContractPermissions tf32;
  tf32.tf32 = true;
  EXPECT_EQ(chooseContractTiling(linearLayer(ContractElement::f32), sm90, tf32)->stagedRows, 128);
  // mma.sync: 128 rows would take 68 KiB of a 64 KiB ring (48 on sm_89):
  // two passes of 64, the shared memory unchanged.
  for (GpuChip chip : {GpuChip::sm_80, GpuChip::sm_89}) {
    std::optional<ContractTiling> t =
        chooseContractTiling(linearLayer(ContractElement::f16), chipProfile(chip));
    ASSERT_TRUE(t);
    EXPECT_EQ(t->stagedRows, 64);
    ContractTiling unstaged = *t;
    unstaged.stagedRows = 0;
    EXPECT_EQ(contractSharedBytes(*t), contractSharedBytes(unstaged));
  }
  // Lines along m take the larger padding's bytes where that is more.
  ContractTiling staged{MmaFamily::mmaSync, 128, 128, 32, 2, 2, 4};
  staged.stagedRows = 128;
  EXPECT_EQ(contractSharedBytes(staged), 128 * (128 + kStagedPadAlongN) * 4);
  // Not without an output unit stride, not with fma, not on a scan.
  ContractShape strided = linearLayer(ContractElement::f16);
  strided.outputUnitStride = false;
  EXPECT_EQ(chooseContractTiling(strided, sm90)->stagedRows, 0);
  EXPECT_EQ(chooseContractTiling(linearLayer(ContractElement::f32), sm90)->stagedRows, 0);
  // What the lowering needs.
  ContractTiling partWarp = staged;
  partWarp.stagedRows = 32; // half of a warp's 64 rows
  EXPECT_NE(std::string(contractTilingProblem(partWarp)), "");
  ContractTiling fma{MmaFamily::fma, 128, 128, 16, 4, 2, 3};
  fma.stagedRows = 128;
  EXPECT_NE(std::string(contractTilingProblem(fma)), "");
  ContractTiling producers{MmaFamily::wgmma, 128, 256, 64, 8, 1, 4, kProducerWarps};
  producers.stagedRows = 128;
  EXPECT_NE(std::string(contractTilingProblem(producers)), "");
}

} // namespace

namespace {

/// A linear layer over [t, b, k] whose epilogue scans t (a neuron).
ContractShape neuronLayer() {
  ContractShape s = linearLayer(ContractElement::f16);
  s.rowDims = 2;
  s.rowsMerge = true;
  s.scans = s.scanIsOuterRow = s.lhsKMajor = true;
  s.carried = 1;
  return s;
}

TEST(ContractTilingHeuristics, ScansTakeFourStagesTheirTileFits) {
  for (const ChipProfile &chip : chipProfiles()) {
    SCOPED_TRACE(chip.name.str());
    std::optional<ContractTiling> t = chooseContractTiling(neuronLayer(), chip);
    ASSERT_TRUE(t);
    EXPECT_STREQ(contractTilingProblem(*t), "");
    EXPECT_EQ(t->stages, 4);
    EXPECT_EQ(t->stagedRows, 0); // a scan stages its own tile
    EXPECT_EQ(t->instruction == MmaFamily::wgmma, !chip.archSpecificName.empty());
    // The f32 tile fits where the ring was, the states after it.
    EXPECT_GE(contractScanSharedBytes(*t, 1), t->tileM * t->tileN * 4 + t->tileN * 4);
    EXPECT_LE(contractScanSharedBytes(*t, 1), chip.sharedBytesPerBlockOptIn);
  }
  ContractTiling mma{MmaFamily::mmaSync, 128, 128, 32, 2, 2, 4};
  EXPECT_EQ(contractScanSharedBytes(mma, 2), 65536 + 2 * 128 * 4);
}

TEST(ContractTilingHeuristics, ScansElsewhereKeepTheLoops) {
  const ChipProfile &chip = chipProfile(GpuChip::sm_90);
  ContractShape inner = neuronLayer();
  inner.scanIsOuterRow = false; // time after another row dimension
  EXPECT_FALSE(chooseContractTiling(inner, chip));
  ContractShape columns = neuronLayer();
  columns.lhsKMajor = false; // a tile's rows gather steps: lhs read along k
  EXPECT_FALSE(chooseContractTiling(columns, chip));
}

} // namespace
