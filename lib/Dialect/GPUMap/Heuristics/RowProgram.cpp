//===- RowProgram.cpp - how a row program is sized -----------------------===//
//
// The row program's sizes from its shape and the chip's limits. Each
// number says why it is what it is; the measurements (H200 unless said)
// are in docs/decisions.md, under "Compiler": the entries on row programs,
// their block sizes, rows kept in registers, and wide rows split over
// clusters (their blocks an SM, the rows a cluster walks).
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/GPUMap/Heuristics/RowProgram.h"

#include "llvm/ADT/bit.h"

#include <algorithm>

using namespace nerve;
using namespace nerve::gpumap;

namespace {
/// Elements a thread of the form by elements aims for, all loaded at once
/// by the first pass.
constexpr int64_t kElementsPerThread = 8;
/// Threads of a block: at most 256 (at 512, kernels of 72-90 registers a
/// thread ran one block an SM whose phases did not overlap: half the
/// speed); 512 for a block staging more than 48 KiB, which few blocks
/// share an SM with and which needs more loads in flight of its own.
constexpr int64_t kMaxThreads = 256;
constexpr int64_t kMaxThreadsLargeStaging = 512;
/// A block that stages more than half the shared memory runs alone on its
/// SM: a constant 1024 threads, which keeps ptxas within 64 registers.
constexpr int64_t kSoloThreads = 1024;
/// A thread's values of the row (as f32) the register form may keep:
/// 16-bit layer_norm (96) took ptxas to 110-127 registers and lost 7-13
/// points; f32 layer_norm (48) and 16-bit softmax (32) gained.
constexpr int64_t kMaxRegisterRowValues = 64;
/// Warps a block of rows shorter than a warp's loads: blocks of one warp
/// stop at 32 an SM, half its warps (bf16 layer_norm over 128-1024
/// columns: 63-70% of the copy bandwidth with one, 74-78% with two).
constexpr int64_t kGroupWarpsPerBlock = 2;
/// Clusters: at most the portable size (kPortableClusterBlocks), 256
/// threads a block, slices that need no opt-in where the cluster size
/// allows (several blocks an SM).
constexpr int64_t kClusterThreads = 256;
/// Blocks of a cluster kernel ptxas is asked to fit on an SM: 5 (48
/// registers) where the elementwise pass reads only the staged row, 4 (64)
/// where it loads more (five spilled for layer_norm, four lost for
/// softmax).
constexpr int64_t kClusterBlocksPerSM = 5;
constexpr int64_t kClusterBlocksPerSMLoadingMore = 4;
/// f32 programs loading more: slices of at most 40 KiB, five blocks of
/// which fit an SM's 228 KiB with their scratch, take a kernel of their own
/// (f32 layer_norm at 4096 x 65536: 71.4 -> 76.5-77.2% of the copy
/// bandwidth).
constexpr int64_t kFiveAnSMSliceBytes = 40 * 1024;
/// One cluster a row up to 1024 rows (about a dozen waves of clusters of 8
/// on an H200); beyond, each walks 4 rows in turn (or fewer, to keep 1024
/// clusters): a cluster launches only when all its blocks find room.
constexpr int64_t kClusterRowsAlone = 1024;
constexpr int64_t kRowsPerCluster = 4;
} // namespace

RowProgramLimits nerve::gpumap::rowProgramLimits(const ChipProfile *chip) {
  RowProgramLimits limits;
  if (!chip)
    return limits;
  limits.stagingBytes = std::max(chip->sharedBytesPerBlockOptIn, kSharedBytesWithoutOptIn);
  int64_t blocks = std::min<int64_t>(chip->maxClusterBlocks, kPortableClusterBlocks);
  limits.clusterBlocks = blocks > 1 ? int64_t(llvm::bit_floor(uint64_t(blocks))) : 0;
  return limits;
}

RowProgramTuning nerve::gpumap::tuneRowProgram(const RowProgramShape &shape,
                                               const RowProgramLimits &limits) {
  RowProgramTuning t;
  t.stagingBytes = std::max(limits.stagingBytes, kSharedBytesWithoutOptIn) - kRowScratchBytes;
  // A whole number of 16-column groups per array keeps each one aligned
  // for 16-byte vectors.
  if (shape.stagedBytesPerColumn > 0)
    t.fitColumns = t.stagingBytes / shape.stagedBytesPerColumn / 16 * 16;
  t.soloStagingBytes = t.stagingBytes / 2;
  t.clusterBlocks =
      limits.clusterBlocks > 1
          ? int64_t(llvm::bit_floor(uint64_t(std::min(limits.clusterBlocks, kPortableClusterBlocks))))
          : 0;
  // 64 bytes in flight a thread whatever the element type: by elements,
  // 16-bit rows had half the bytes in flight of f32 rows (f16 log_softmax
  // 44-58% of the copy bandwidth, 84-87% sized by vectors).
  t.elementsPerThread = kElementsPerThread;
  t.columnsPerThread =
      shape.lanes > 1 ? kRowVectorsPerThread * shape.lanes : kElementsPerThread;
  t.maxThreads = kMaxThreads;
  t.maxThreadsLargeStaging = kMaxThreadsLargeStaging;
  t.soloThreads = kSoloThreads;
  t.clusterThreads = kClusterThreads;
  t.groupWarpsPerBlock = kGroupWarpsPerBlock;
  if (shape.stagedInputs > 0 && shape.lanes > 1)
    t.rowInRegisters = kRowVectorsPerThread * shape.lanes *
                           (shape.stagedInputs + shape.otherLoads) <=
                       kMaxRegisterRowValues;
  t.clusterOnlyTooWide = shape.otherLoads > 0;
  t.clusterSliceBytes = kSharedBytesWithoutOptIn;
  t.clusterBlocksPerSM =
      t.clusterOnlyTooWide ? kClusterBlocksPerSMLoadingMore : kClusterBlocksPerSM;
  if (t.clusterOnlyTooWide && shape.stagedBytesPerColumn == 4) {
    t.fiveAnSMSliceBytes = kFiveAnSMSliceBytes;
    t.fiveAnSMBlocksPerSM = kClusterBlocksPerSM;
  }
  t.clusterRowsAlone = kClusterRowsAlone;
  t.rowsPerCluster = kRowsPerCluster;
  return t;
}
