//===- ContractTiling.cpp - how a contraction runs on tensor cores --------===//
//
// Blocks of 128 x 128 output elements, four warps of 64 x 64 (32 m16n8k16
// instructions a warp for each 16 of the contracted dimension: register
// tiles large enough that the shared-memory reads of the fragments keep
// up with the tensor cores), the contracted dimension in steps of 32 (one
// 64-byte row of a 16-bit tile, swizzled so that ldmatrix reads conflict
// free). The operand tiles pass through a ring of shared-memory stages
// filled by cp.async: four where two blocks' rings fit an SM, else three.
// Few static rows take blocks of 64 rows (half the block's work is not
// wasted on padding).
//
// f32 operands (IEEE, no tf32) take fma: blocks of 128 x 128 in eight
// warps of 32 x 64, each lane 8 x 8 accumulators (two 4-groups of rows by
// two of columns: per k, four 16-byte shared-memory reads feed 64 fused
// multiply-adds), k in steps of 16, three stages of 33 KiB. Where the
// user allows tf32, they take tensor cores instead: the 16-bit tilings
// with 128-byte rows of 32 f32 (wgmma on sm_90, mma.sync elsewhere).
// Where the output has a unit stride, the tensor-core tilings' epilogues
// stage as many output rows at once as the ring holds in f32 (wgmma's
// 128; mma.sync's 64 of 128) and store 16 bytes a thread along a row.
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/GPUMap/Heuristics/ContractTiling.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>

namespace nerve::gpumap {

namespace {
using SmallVectorTilings = llvm::SmallVector<ContractTiling, 2>;
bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }
constexpr int64_t kHalfBytes = 2, kF32Bytes = 4;
constexpr int64_t kChunkBytes = 16;
constexpr int64_t kBlocksPerSM = 2;
constexpr int64_t kSwizzlePeriod = 1024;
} // namespace

int64_t contractStagingBytes(const ContractTiling &t) {
  int64_t alongN = t.stagedRows * (t.tileN + kStagedPadAlongN);
  int64_t alongM = t.tileN * (t.stagedRows + kStagedPadAlongM);
  return t.stagedRows > 0 ? std::max(alongN, alongM) * kF32Bytes : 0;
}

int64_t contractSharedBytes(const ContractTiling &t) {
  if (t.instruction == MmaFamily::fma)
    return t.stages * (t.tileM + t.tileN + 2 * kFmaPad) * t.tileK * kF32Bytes;
  int64_t bytes = isTf32(t.instruction) ? kF32Bytes : kHalfBytes;
  int64_t ring = t.stages * (t.tileM + t.tileN) * t.tileK * bytes;
  if (t.producerWarps > 0)
    ring += 2 * t.stages * kBarrierBytes;
  ring = std::max(ring, contractStagingBytes(t));
  return isWarpgroup(t.instruction) ? ring + kSwizzlePeriod : ring;
}

int64_t contractScanSharedBytes(const ContractTiling &t, int64_t carried) {
  int64_t tile = t.tileM * t.tileN * kF32Bytes;
  int64_t staged = std::max(contractSharedBytes(t),
                            tile + (isWarpgroup(t.instruction) ? kSwizzlePeriod : 0));
  return staged + carried * t.tileN * kF32Bytes;
}

static const char *wgmmaTilingProblem(const ContractTiling &t) {
  if (t.tileM != 64 && t.tileM != 128)
    return "a wgmma tile_m must be 64 or 128 (a warpgroup per 64 rows)";
  if (t.warpsM != t.tileM / 16 || t.warpsN != 1)
    return "a wgmma tiling takes four warps along m per 64 rows, one along n";
  if (t.tileN != 64 && t.tileN != 128 && t.tileN != 256)
    return "a wgmma tile_n must be 64, 128 or 256";
  if (t.tileK != (t.instruction == MmaFamily::wgmmaTf32 ? 32 : 64))
    return "a wgmma tile_k must be 128-byte rows: 64 16-bit elements, 32 tf32";
  if (t.stages < 3)
    return "a wgmma tiling takes at least three stages";
  if (t.producerWarps != 0 &&
      (t.producerWarps != kProducerWarps || t.warpsM != kSpecializedConsumerWarps))
    return "a wgmma tiling's producer warps must be none or a warpgroup (4) beside two "
           "multiplying ones (tile_m 128)";
  return "";
}

static const char *fmaTilingProblem(const ContractTiling &t) {
  int64_t threads = t.warpsM * t.warpsN * 32;
  if (t.warpsM <= 0 || t.warpsN <= 0 || threads > 1024)
    return "warps must be positive, at most 32 a block";
  if (t.tileM <= 0 || t.tileN <= 0 || t.tileM % t.warpsM != 0 || t.tileN % t.warpsN != 0)
    return "tile_m and tile_n must be positive multiples of warps_m and warps_n";
  int64_t warpM = t.tileM / t.warpsM, warpN = t.tileN / t.warpsN;
  if (warpM % (kFmaLanesM * kFmaGroup) != 0 || warpN % (kFmaLanesN * kFmaGroup) != 0)
    return "an fma warp's tile must be whole groups of 4 for each lane (rows a multiple of "
           "16, columns of 32)";
  if ((warpM / kFmaLanesM) * (warpN / kFmaLanesN) > 128)
    return "an fma lane takes at most 128 accumulators";
  if (t.tileK != 8 && t.tileK != 16 && t.tileK != 32)
    return "an fma tile_k must be 8, 16 or 32";
  if ((t.tileM * t.tileK) % (threads * kFmaGroup) != 0 ||
      (t.tileN * t.tileK) % (threads * kFmaGroup) != 0)
    return "the operand tiles must be whole 16-byte groups for every thread";
  if (t.stages < 2)
    return "at least two stages";
  return "";
}

static const char *stagedRowsProblem(const ContractTiling &t) {
  if (t.stagedRows < 0)
    return "staged_rows must not be negative";
  if (t.stagedRows == 0)
    return "";
  if (t.instruction == MmaFamily::fma)
    return "staged_rows is for tensor-core tilings (fma lanes store from registers)";
  if (t.producerWarps != 0)
    return "staged_rows takes no producer warps (every thread stores)";
  if (t.warpsM <= 0 || t.stagedRows % (t.tileM / t.warpsM) != 0 || t.tileM % t.stagedRows != 0)
    return "staged_rows must divide tile_m and hold whole warps' rows (tile_m / warps_m)";
  return "";
}

static const char *instructionTilingProblem(const ContractTiling &t) {
  if (isWarpgroup(t.instruction))
    return wgmmaTilingProblem(t);
  if (t.producerWarps != 0)
    return "producer warps are for wgmma tilings only";
  if (t.instruction == MmaFamily::fma)
    return fmaTilingProblem(t);
  if (t.warpsM <= 0 || t.warpsN <= 0 || t.warpsM * t.warpsN > 32)
    return "warps must be positive, at most 32 a block";
  if (!isPowerOfTwo(t.tileM) || !isPowerOfTwo(t.tileN) || t.tileM < 32 || t.tileN < 32)
    return "tile_m and tile_n must be powers of two, at least 32";
  if (t.tileM % (t.warpsM * kMmaM) != 0 || t.tileN % (t.warpsN * 2 * kMmaN) != 0)
    return "a warp's tile must be whole 16 x 16 instruction tiles";
  bool tf32 = t.instruction == MmaFamily::mmaSyncTf32;
  if (tf32 ? t.tileK != 32 : t.tileK != 32 && t.tileK != 64)
    return "tile_k must be 32 or 64 (tf32: 32)";
  int64_t threads = t.warpsM * t.warpsN * 32;
  int64_t bytes = tf32 ? kF32Bytes : kHalfBytes;
  int64_t chunksA = t.tileM * t.tileK * bytes / kChunkBytes;
  int64_t chunksB = t.tileN * t.tileK * bytes / kChunkBytes;
  if (chunksA % threads != 0 || chunksB % threads != 0)
    return "the operand tiles must be whole 16-byte chunks for every thread";
  if (t.stages < 2)
    return "at least two stages";
  return "";
}

const char *contractTilingProblem(const ContractTiling &t) {
  if (const char *problem = instructionTilingProblem(t); *problem)
    return problem;
  return stagedRowsProblem(t);
}

/// A scanning epilogue's tiling: the products' (wgmma on sm_90), with lhs
/// read along k (a tile's rows gather several steps, each row a copy of
/// its own) and four stages, whose ring the f32 output tile then reuses
/// (mma.sync's 64 KiB exactly).
static std::optional<ContractTiling> chooseScanTiling(const ContractShape &s,
                                                      const ChipProfile &chip,
                                                      bool tf32) {
  if (!s.scanIsOuterRow || !s.lhsKMajor)
    return std::nullopt;
  SmallVectorTilings candidates;
  if (tf32 && !chip.archSpecificName.empty())
    candidates.push_back({MmaFamily::wgmmaTf32, 128, 256, 32, 8, 1, 4});
  if (tf32)
    candidates.push_back({MmaFamily::mmaSyncTf32, 128, 128, 32, 2, 2, 4});
  if (s.lhs == ContractElement::f32)
    candidates.push_back({MmaFamily::fma, 128, 128, 16, 4, 2, 3});
  else if (!chip.archSpecificName.empty())
    candidates.push_back({MmaFamily::wgmma, 128, 256, 64, 8, 1, 4});
  if (s.lhs != ContractElement::f32)
    candidates.push_back({MmaFamily::mmaSync, 128, 128, 32, 2, 2, 4});
  for (const ContractTiling &t : candidates)
    if (contractScanSharedBytes(t, s.carried) <= chip.sharedBytesPerBlockOptIn)
      return t;
  return std::nullopt;
}

/// The most rows of `t`'s output tile whose f32 sums fit the ring at
/// once (halving down to one warp's rows), where the output has a unit
/// stride; 0 where it has none or not even a warp's rows fit. Stored from
/// registers, a warp's store writes 8 bytes into each of eight rows; from
/// the staged rows, 16 bytes a lane along one row.
static int64_t stagedRowsFor(ContractTiling t, const ContractShape &s) {
  if (!s.outputUnitStride)
    return 0;
  int64_t ring = contractSharedBytes(t);
  int64_t warpRows = t.tileM / t.warpsM;
  for (t.stagedRows = t.tileM; t.stagedRows >= warpRows; t.stagedRows /= 2)
    if (t.tileM % t.stagedRows == 0 && t.stagedRows % warpRows == 0 &&
        contractSharedBytes(t) <= ring)
      return t.stagedRows;
  return 0;
}

/// Four warps of 64 x 64 over a 128 x 128 tile (few static rows: 64 x 128),
/// k 32 at a time, four stages where two blocks' rings fit an SM, else
/// three.
static std::optional<ContractTiling> warpTiling(const ContractShape &s, const ChipProfile &chip,
                                                MmaFamily family) {
  ContractTiling t{family, 128, 128, 32, 2, 2, 4};
  if (s.rows > 0 && s.rows <= 64) {
    t.tileM = 64;
    t.warpsM = 1;
  }
  while (t.stages > 3 && kBlocksPerSM * contractSharedBytes(t) > chip.sharedBytesPerMultiprocessor)
    --t.stages;
  if (contractSharedBytes(t) > chip.sharedBytesPerBlockOptIn)
    return std::nullopt;
  t.stagedRows = stagedRowsFor(t, s);
  return t;
}

/// Two warpgroups of m64n256 over a 128 x 256 tile (few static rows: one
/// over 64 x 256), four stages of 128-byte rows (48 KiB each, 16-bit or
/// tf32): one block an SM. Every warp copies and multiplies: a third
/// warpgroup that only copies (producer_warps) ran the products 20 points
/// slower (docs/decisions.md, "Producer warps").
static std::optional<ContractTiling> warpgroupTiling(const ContractShape &s,
                                                     const ChipProfile &chip, MmaFamily family) {
  ContractTiling w{family, 128, 256, family == MmaFamily::wgmmaTf32 ? 32 : 64, 8, 1, 4};
  if (s.rows > 0 && s.rows <= 64) {
    w.tileM = 64;
    w.warpsM = 4;
  }
  if (contractSharedBytes(w) > chip.sharedBytesPerBlockOptIn)
    return std::nullopt;
  w.stagedRows = stagedRowsFor(w, s);
  return w;
}

std::optional<ContractTiling> chooseContractTiling(const ContractShape &s,
                                                   const ChipProfile &chip,
                                                   const ContractPermissions &allowed) {
  bool sixteenBit = s.lhs == ContractElement::f16 || s.lhs == ContractElement::bf16;
  bool f32 = s.lhs == ContractElement::f32;
  if ((!sixteenBit && !f32) || s.rhs != s.lhs || s.output == ContractElement::other)
    return std::nullopt;
  bool rows = s.rowDims == 1 || (s.rowDims > 1 && s.rowsMerge);
  if (!rows || s.columnDims != 1 || s.contractedDims != 1 || s.batchDims != 0)
    return std::nullopt;
  if (!s.lhsUnitStride || !s.rhsUnitStride || chip.computeCapability < 80)
    return std::nullopt;
  // tf32 on wgmma: the 16-bit tiling's bytes (rows of 32 f32; wgmma reads
  // tf32 K-major only, so an operand read along m or n is transposed as
  // it is copied).
  bool tf32 = f32 && allowed.tf32;
  if (s.scans)
    return chooseScanTiling(s, chip, tf32);
  if (tf32 && !chip.archSpecificName.empty())
    if (std::optional<ContractTiling> w = warpgroupTiling(s, chip, MmaFamily::wgmmaTf32))
      return w;
  if (tf32)
    if (std::optional<ContractTiling> t = warpTiling(s, chip, MmaFamily::mmaSyncTf32))
      return t;
  if (f32) {
    // Eight warps of 32 x 64 (few static rows: of 32 x 32).
    ContractTiling f{MmaFamily::fma, 128, 128, 16, 4, 2, 3};
    if (s.rows > 0 && s.rows <= 64) {
      f.tileM = 64;
      f.warpsM = 2;
      f.warpsN = 4;
    }
    return f;
  }
  if (!chip.archSpecificName.empty())
    if (std::optional<ContractTiling> w = warpgroupTiling(s, chip, MmaFamily::wgmma))
      return w;
  return warpTiling(s, chip, MmaFamily::mmaSync);
}

} // namespace nerve::gpumap
