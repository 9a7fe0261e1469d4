//===- TiledTranspose.cpp - how a tiled transpose is sized ---------------===//
//
// The tiled transpose's sizes, each with the measurement behind it (H200,
// softmax of a column-major view; more in docs/decisions.md, under
// "Compiler": the entries on tiled transposes and transposed tiles).
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/GPUMap/Heuristics/TiledTranspose.h"

#include <algorithm>

using namespace nerve::gpumap;

namespace {
/// The scalar form's tile line.
constexpr int64_t kTileLineBytes = 128;
/// Shared tiles in a block's ring. With two, f16 at 16384 x 4096 / 65536 x
/// 1024 / 4096 x 65536 ran at 47.8 / 47.3 / 53.2% of the copy bandwidth
/// (the write pass loading the next tile through registers) -> 52.1 / 51.6
/// / 56.4%; with three 53.5 / 52.8 / 59.1% (f32 54.5 / 53.8 / 57.8 -> 61.8
/// / 61.4 / 65.0%); four, or eight tiles a block, within a point.
constexpr int64_t kTileStages = 3;
/// Shared memory a block's ring may take: within every supported chip's
/// opt-in limit (99 KiB on sm_89), two blocks an SM on sm_80, sm_90 and
/// sm_100.
constexpr int64_t kRingBytes = 96 * 1024;
/// Loads along p take a vector a chunk of 16-bit data (8 lanes): f16 at
/// 16384 x 4096 / 4096 x 65536 / 65536 x 1024, 0.1447 / 0.4850 / 0.1467 ms
/// -> 0.1385 / 0.4780 / 0.1393; f32 (4 lanes) no faster (0.2338 / 0.8790 /
/// 0.2362 -> 0.2367 / 0.8741 / 0.2432), so f32 keeps its loads.
constexpr int64_t kMinAlongPLanes = 8;
} // namespace

int64_t nerve::gpumap::scalarTileSide(int64_t widestElementBytes) {
  return std::clamp<int64_t>(kTileLineBytes / std::max<int64_t>(widestElementBytes, 1), 16, 64);
}

/// Four chunks a thread of 16-bit elements (128 threads, 32 elements
/// each), two of f32 (512 threads, 8 each). With the ring, at 16384 x 4096
/// / 4096 x 65536: f16 with four 56.8 / 60.9% of the copy bandwidth
/// against 53.6 / 59.4% with two (96 registers against 64; one 45 / 50%);
/// f32 with four 61.5 / 64.5% against 62.2 / 64.9% (111 registers against
/// 40).
int64_t nerve::gpumap::vectorChunksPerThread(int64_t lanes) { return lanes >= 8 ? 4 : 2; }

int64_t nerve::gpumap::vectorTileStages(int64_t stagedInputs, int64_t lanes) {
  int64_t perStage = stagedInputs * kVectorTileSide * kVectorTileSide * (16 / lanes);
  for (int64_t stages = kTileStages; stages >= 2; --stages)
    if (stages * perStage <= kRingBytes)
      return stages;
  return 0;
}

bool nerve::gpumap::loadsAlongPTakeVectors(int64_t lanes, int64_t elementBytes) {
  return lanes >= kMinAlongPLanes && (elementBytes == 2 || elementBytes == 4);
}
