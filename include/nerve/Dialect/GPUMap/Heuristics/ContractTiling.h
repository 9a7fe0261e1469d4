//===- ContractTiling.h - how a contraction runs on tensor cores -*- C++ -*-===//
//
// Whether a contraction (a matrix product, a linear layer) runs on tensor
// cores and how its blocks are tiled, as a pure function of what the
// compiler knows of it and the chip. nerve-gpu-select-contract-tiling
// records the answer as a #gpumap.contract_tiling on the tdim.contract;
// the lowering only applies it. Why these numbers: ContractTiling.cpp and
// docs/decisions.md.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_DIALECT_GPUMAP_HEURISTICS_CONTRACTTILING_H
#define NERVE_DIALECT_GPUMAP_HEURISTICS_CONTRACTTILING_H

#include "nerve/Target/ChipProfile.h"

#include <cstdint>
#include <optional>

namespace nerve::gpumap {

/// The instruction family a tiling is for: warp-level mma.sync (m16n8k16,
/// fragments through ldmatrix; every chip), warpgroup-level wgmma
/// (m64nNk16, operands read from shared memory through descriptors; sm_90
/// only), wgmmaTf32: wgmma on f32 operands read as tf32 (m64nNk8, both
/// operands staged K-major), mmaSyncTf32: mma.sync's m16n8k8 on tf32
/// (every chip; staged as wgmmaTf32's), or fma: IEEE f32 fused multiply-adds on the CUDA
/// cores (each lane an outer product of 4-element groups of rows and
/// columns).
enum class MmaFamily { mmaSync, wgmma, wgmmaTf32, mmaSyncTf32, fma };

/// Whether `family` reads f32 operands as tf32.
inline bool isTf32(MmaFamily family) {
  return family == MmaFamily::wgmmaTf32 || family == MmaFamily::mmaSyncTf32;
}

/// Whether `family` is a warpgroup's (wgmma on 16-bit or tf32 operands).
inline bool isWarpgroup(MmaFamily family) {
  return family == MmaFamily::wgmma || family == MmaFamily::wgmmaTf32;
}

/// The element types a tensor-core contraction distinguishes.
enum class ContractElement { f16, bf16, f32, other };

/// What the compiler knows of a contraction out[m, n] = sum_k lhs * rhs
/// before it lowers it.
struct ContractShape {
  ContractElement lhs = ContractElement::other, rhs = ContractElement::other;
  ContractElement output = ContractElement::other;
  /// Dimensions of each kind: rows (lhs and output only), columns (rhs and
  /// output only), contracted (both operands), batch (all three).
  int64_t rowDims = 0, columnDims = 0, contractedDims = 0, batchDims = 0;
  /// Whether several row dimensions are one in memory: consecutive and in
  /// the same order in lhs and the output, both row-major (a linear layer
  /// over [t, b, k] is one over [t * b, k]).
  bool rowsMerge = false;
  /// Whether each operand has a unit-stride dimension (either of its two:
  /// the tile is staged along it), and whether the output has one (its
  /// tile can then be stored in 16-byte chunks along it).
  bool lhsUnitStride = false, rhsUnitStride = false, outputUnitStride = false;
  /// Static extents where the types give them (0: bound at launch).
  int64_t rows = 0, columns = 0, contracted = 0;
  /// An epilogue scanning a row dimension in order (a neuron over time):
  /// whether the scanned dimension is lhs's outermost row dimension, other
  /// row dimensions after it (all merging as above), whether lhs's unit stride is along k, and
  /// how many states it carries. A scan's block owns a few rows at every
  /// step, so its tile is staged in f32 through shared memory between the
  /// products and the scan.
  bool scans = false, scanIsOuterRow = false, lhsKMajor = false;
  int64_t carried = 0;
};

/// What the user allows a contraction: f32 operands read as tf32 on
/// tensor cores (10-bit mantissas, f32 sums; PyTorch's allow_tf32).
struct ContractPermissions {
  bool tf32 = false;
};

/// A block's tile of the output and of the contracted dimension, its warps
/// and the shared-memory stages its operand tiles pass through.
struct ContractTiling {
  MmaFamily instruction = MmaFamily::mmaSync;
  int64_t tileM = 0, tileN = 0, tileK = 0;
  int64_t warpsM = 0, warpsN = 0;
  int64_t stages = 0;
  /// Warps that only copy the operand tiles (a warpgroup, wgmma only), the
  /// others only multiplying: 0 where every warp does both.
  int64_t producerWarps = 0;
  /// Output rows whose f32 sums pass through shared memory at once after
  /// the products (the ring's bytes), so that each thread then stores
  /// whole 16-byte chunks along the output's unit stride: 0 where each
  /// thread stores its accumulators from registers.
  int64_t stagedRows = 0;
};

/// f32 elements that pad a line of the staged output tile: 8 where lines
/// run along n (each thread writes pairs of columns; a warp's eight rows
/// then fill the banks twice, no more), 4 where they run along m (single
/// elements, eight rows by four column pairs a warp's store).
constexpr int64_t kStagedPadAlongN = 8, kStagedPadAlongM = 4;

/// A warp-specialized wgmma block: two multiplying warpgroups and one that
/// copies the operand tiles (cp.async, signalling each stage's mbarrier
/// when its copies land).
constexpr int64_t kProducerWarps = 4, kSpecializedConsumerWarps = 8;
/// Bytes of one mbarrier (a stage has two: its tiles landed, its tiles
/// read).
constexpr int64_t kBarrierBytes = 8;

/// The m16n8k16 instruction's extents (mma.sync, f16 and bf16 inputs).
constexpr int64_t kMmaM = 16, kMmaN = 8, kMmaK = 16;

/// An fma tiling's warp: lanes 4 along m by 8 along n, each owning whole
/// groups of 4 rows and 4 columns (a 16-byte vector in shared memory,
/// whose rows are padded by one group against bank conflicts).
constexpr int64_t kFmaLanesM = 4, kFmaLanesN = 8, kFmaGroup = 4, kFmaPad = 4;
/// The blocks an SM should fit with an fma tiling (ptxas then keeps a
/// lane's 64 accumulators and its operands within 128 registers): the
/// CUDA cores' latencies are hidden by the other block's warps.
constexpr int64_t kFmaBlocksPerSM = 2;

/// The tiling of a contraction of `shape` on `chip`, or none where the
/// general lowering must take it (not two float operands of one type,
/// f16, bf16 or f32, not one column and contracted dimension and one row
/// dimension or several that merge, a batch dimension, an operand with no
/// unit stride). 16-bit operands take tensor cores, f32 ones fma, or
/// tf32 where `allowed` says so (wgmma_tf32 where the chip has wgmma,
/// mma_sync_tf32 elsewhere).
std::optional<ContractTiling> chooseContractTiling(const ContractShape &shape,
                                                   const ChipProfile &chip,
                                                   const ContractPermissions &allowed = {});

/// Bytes of shared memory a block of `tiling` takes: its operand tiles'
/// ring (16-bit elements on tensor cores, f32 in padded rows with fma),
/// with producer warps each stage's two mbarriers after it, or its staged
/// output rows where they take more; with wgmma's the 1024 bytes that
/// align the ring to its swizzle's period.
int64_t contractSharedBytes(const ContractTiling &tiling);

/// Bytes of `tiling`'s staged output rows in f32 with their padding,
/// whichever of the output's dimensions has the unit stride (0 without
/// staged rows).
int64_t contractStagingBytes(const ContractTiling &tiling);

/// Bytes of shared memory a block of `tiling` takes when its epilogue
/// scans with `carried` states: the larger of its ring and its f32 output
/// tile, then the states of a row of the tile (kept between chunks of
/// steps).
int64_t contractScanSharedBytes(const ContractTiling &tiling, int64_t carried);

/// Why `tiling` cannot be applied, or an empty string. mma.sync: every
/// warp's tile a whole number of instruction tiles, tileK 32 or 64, at
/// least two stages. wgmma: a warpgroup (four warps along m) per 64 rows,
/// one along n, tileN 64 to 256, tileK 64 (32 for tf32: one 128-byte
/// swizzled row), at least three stages (the copies run two tiles behind
/// the one whose products may still be in flight), no producer warps or
/// one warpgroup of them beside two multiplying ones. mma_sync_tf32:
/// mma.sync's, with tileK 32 (128-byte rows). fma: at most 1024 threads, a warp's tile whole groups
/// of 4 for each lane (rows a multiple of 16, columns of 32), at most 128
/// accumulators a lane, tileK 8, 16 or 32, the operand tiles whole
/// elements and 16-byte groups for every thread, at least two stages.
/// Producer warps are wgmma's only. Staged rows: tensor cores only, not
/// with producer warps, whole warps' rows (a multiple of tile_m / warps_m)
/// dividing tile_m.
const char *contractTilingProblem(const ContractTiling &tiling);

} // namespace nerve::gpumap

#endif // NERVE_DIALECT_GPUMAP_HEURISTICS_CONTRACTTILING_H
