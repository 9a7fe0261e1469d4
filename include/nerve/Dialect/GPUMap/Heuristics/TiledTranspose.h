//===- TiledTranspose.h - how a tiled transpose is sized ---------*- C++ -*-===//
//
// The tiled transpose's heuristics (a loop storing along one dimension and
// loading along another, in square tiles through shared memory), as pure
// functions of what the compiler knows of the loop. The numbers were tuned
// on an H200 and fit every chip nerve compiles for (what each measured is
// in TiledTranspose.cpp and docs/decisions.md).
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_DIALECT_GPUMAP_HEURISTICS_TILEDTRANSPOSE_H
#define NERVE_DIALECT_GPUMAP_HEURISTICS_TILEDTRANSPOSE_H

#include <cstdint>

namespace nerve::gpumap {

/// The scalar form's threads a block.
constexpr int64_t kTileThreads = 256;
/// The vector form's tiles: 64 x 64 elements (128 or 256 bytes a side).
constexpr int64_t kVectorTileSide = 64;
/// Tiles a block takes, a contiguous range of them, either form.
constexpr int64_t kTilesPerBlock = 4;

/// The scalar form's elements along a tile's side: a line of 128 bytes of
/// the widest element the loop stages or stores, from 16 to 64.
int64_t scalarTileSide(int64_t widestElementBytes);

/// The vector form's 16-byte chunks of a tile a thread, `lanes` elements a
/// chunk.
int64_t vectorChunksPerThread(int64_t lanes);

/// Shared tiles in the vector form's ring for `stagedInputs` inputs of
/// `lanes` elements a 16-byte chunk: 3 where they fit, else 2, else 0 (the
/// scalar form must do).
int64_t vectorTileStages(int64_t stagedInputs, int64_t lanes);

/// Whether a load along the tile's other dimension of `elementBytes`-byte
/// elements takes a vector a chunk, `lanes` elements a chunk.
bool loadsAlongPTakeVectors(int64_t lanes, int64_t elementBytes);

} // namespace nerve::gpumap

#endif // NERVE_DIALECT_GPUMAP_HEURISTICS_TILEDTRANSPOSE_H
