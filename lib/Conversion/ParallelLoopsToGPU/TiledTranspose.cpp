//===- TiledTranspose.cpp - elementwise loops that transpose -------------===//
//
// A straight-line parallel loop may store along one of its dimensions while
// it loads along another: softmax over the last dimension of a column-major
// view writes y[r, c] (contiguous along c) from x[r, c] (contiguous along
// r). Threads consecutive along c store coalesced but load 32 addresses a
// column apart (17% of the copy bandwidth on an H200); consecutive along r,
// the other way round. Here the loop runs in square tiles, a GPU block
// each: the block first loads the tile of each such input with threads
// consecutive along the input's contiguous dimension into shared memory,
// then computes with threads consecutive along the stores' contiguous
// dimension, reading the staged inputs from shared memory transposed.
//
//   for tile (p0, q0) (per GPU block):
//     load x[p0 + tid % T, q0 + tid / T + k*rows] into tile[q][p], each k
//     barrier
//     compute (p0 + tid / T + k*rows, q0 + tid % T), each k; x from tile
//     barrier (before the next tile overwrites it)
//
// Two forms, chosen at run time:
//  - By 16-byte chunks, where a host check finds the staged buffers
//    aligned and p's count a whole number of chunks (2- and 4-byte
//    elements). A tile is 64 x 64 elements; a thread loads two (f32) or four
//    (16-bit) chunks of tile rows into a shared tile whose chunks are
//    swizzled (chunk j of row r at j ^ (r % 8)), so that both the row-wise
//    stores and the chunk-wise reads of eight threads hit distinct banks;
//    computing, a thread takes its chunks' elements. A block takes a
//    contiguous range of four tiles, copied asynchronously (cp.async, no
//    registers) into a ring of three shared tiles: the next two are in
//    flight while it computes one, and a tile's coordinates are advanced
//    from the previous one's instead of divided out of its number. Against
//    the scalar form, f16 softmax of a column-major view went from 28-32% to
//    39-47% of the copy bandwidth on an H200: eight f16 of a chunk take one
//    load and four registers where elements took eight of each, so more
//    bytes are in flight per thread. In 16-bit chunks, a value per iteration
//    along p read directly (a softmax's row maximum and sum) is one vector
//    load a chunk instead of eight.
//  - By elements otherwise. A tile spans 128 bytes of the widest element
//    along both dimensions (32 f32, 64 f16), so that every global access of
//    a warp covers whole 32-byte sectors. Tile rows are padded by 4 bytes:
//    the transposed reads of a warp hit 32 distinct banks.
// A tile wholly inside the loop's bounds runs unguarded; in one at the
// edge, loads past the bounds are clamped to the last iteration (chunk)
// and stores are skipped (with 64-bit indices, the clamps and guards cost
// as much issue time as the arithmetic of a softmax).
//
//===----------------------------------------------------------------------===//

#include "LoopMapping.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace nerve::loop_mapping {
namespace {

// The sizes (threads, tiles, chunks a thread, the ring's stages) come from
// the tiled transpose's heuristics (nerve/Dialect/GPUMap/Heuristics/
// TiledTranspose.h). Alternatives the vector form measured slower on an
// H200 (softmax of a column-major view, three shapes): f16 tiles of 128 x
// 128 (2 or 4 chunks a thread) by 8-13%; f32 tiles of 32 x 32 by 6-9%; f32
// tiles of 64 x 64 by one chunk a thread by 12-14%; a tile a block by 8-11%.
using nerve::gpumap::kTilesPerBlock;
using nerve::gpumap::kTileThreads;
using nerve::gpumap::kVectorTileSide;

/// Which of `loop`'s dimensions `v` is the index of, or -1.
int dimensionOf(scf::ParallelOp loop, Value v) {
  auto ivs = loop.getInductionVars();
  auto it = llvm::find(ivs, v);
  return it == ivs.end() ? -1 : static_cast<int>(it - ivs.begin());
}

/// The loop's dimensions p (along which the staged loads are contiguous)
/// and q (along which every store is), and the loads to stage.
struct TransposePlan {
  unsigned p = 0, q = 0;
  SmallVector<Operation *> staged; ///< memref.load ops
  /// Loads read directly that vary along p alone, contiguously (a value
  /// per row, such as a softmax's row maximum and sum): the vector form
  /// reads a chunk's worth of each with one vector load.
  SmallVector<Operation *> alongP;
};

/// `loop` as a tiled transpose: a straight-line body whose stores are all
/// contiguous along the same dimension q, with at least one load contiguous
/// along another dimension p that also depends on q. Such a load is staged
/// when its indices are the loop's indices or values from outside, and the
/// loop stores nothing into its buffer.
std::optional<TransposePlan> matchTiledTranspose(scf::ParallelOp loop) {
  if (loop.getNumLoops() < 2 || loop.getNumResults() != 0)
    return std::nullopt;
  Block *body = loop.getBody();
  int q = -1;
  llvm::SmallPtrSet<Value, 4> stored;
  for (Operation &op : body->without_terminator()) {
    if (op.getNumRegions() != 0)
      return std::nullopt;
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      std::optional<unsigned> dim = contiguousDim(store.getMemRefType());
      int along = dim ? dimensionOf(loop, store.getIndices()[*dim]) : -1;
      if (along < 0 || (q >= 0 && along != q))
        return std::nullopt;
      q = along;
      stored.insert(store.getMemRef());
    } else if (!isa<memref::LoadOp>(op) && !isMemoryEffectFree(&op)) {
      return std::nullopt;
    }
  }
  if (q < 0)
    return std::nullopt;
  TransposePlan plan;
  plan.q = q;
  auto outside = [&](Value v) { return !loop->isAncestor(v.getParentBlock()->getParentOp()); };
  auto ivOrOutside = [&](Value v) { return dimensionOf(loop, v) >= 0 || outside(v); };
  int p = -1;
  for (auto load : body->getOps<memref::LoadOp>()) {
    std::optional<unsigned> dim = contiguousDim(load.getMemRefType());
    int along = dim ? dimensionOf(loop, load.getIndices()[*dim]) : -1;
    if (along < 0 || along == q || (p >= 0 && along != p) || stored.contains(load.getMemRef()))
      continue;
    if (!llvm::all_of(load.getIndices(), ivOrOutside) ||
        !llvm::is_contained(load.getIndices(), loop.getInductionVars()[q]))
      continue; // a row read by every thread of the tile alike stays direct
    p = along;
    plan.staged.push_back(load);
  }
  if (plan.staged.empty())
    return std::nullopt;
  plan.p = p;
  Value pIV = loop.getInductionVars()[p];
  for (auto load : body->getOps<memref::LoadOp>()) {
    std::optional<unsigned> dim = contiguousDim(load.getMemRefType());
    if (!dim || load.getIndices()[*dim] != pIV || stored.contains(load.getMemRef()) ||
        !outside(load.getMemRef()) || llvm::is_contained(plan.staged, load.getOperation()))
      continue;
    // p's index along the contiguous dimension alone.
    if (llvm::all_of(load.getIndices(), ivOrOutside) && llvm::count(load.getIndices(), pIV) == 1)
      plan.alongP.push_back(load);
  }
  return plan;
}

/// The tiles of a planned loop, as host values both forms use.
struct TileGrid {
  mutable scf::ParallelOp loop; // op handles are values; accessors are not const
  const TransposePlan &plan;
  SmallVector<Value> counts;    ///< trip count per dimension
  SmallVector<unsigned> others; ///< dimensions besides p and q: a tile per iteration
  Value tilesP, tilesQ, work;   ///< tiles along p, along q, in all
  int64_t side;                 ///< iterations of a tile along p and along q

  /// The grid of tiles of `tileSide` iterations a side, built at `b`.
  TileGrid sized(OpBuilder &b, Location loc, int64_t tileSide) const {
    TileGrid g = *this;
    g.side = tileSide;
    Value sideV = indexConstant(b, loc, tileSide);
    g.tilesP = arith::CeilDivUIOp::create(b, loc, counts[plan.p], sideV);
    g.tilesQ = arith::CeilDivUIOp::create(b, loc, counts[plan.q], sideV);
    g.work = arith::MulIOp::create(b, loc, g.tilesP, g.tilesQ);
    for (unsigned d : others)
      g.work = arith::MulIOp::create(b, loc, g.work, counts[d]);
    return g;
  }

  /// The loop's index along `d` at its iteration `k`.
  Value ivAt(OpBuilder &b, Location loc, unsigned d, Value k) const {
    return arith::AddIOp::create(b, loc, loop.getLowerBound()[d],
                                 arith::MulIOp::create(b, loc, k, loop.getStep()[d]));
  }

  /// A tile: the loop's indices along the other dimensions (null
  /// along p and q) and the tile's first iterations along p and q.
  struct Tile {
    SmallVector<Value> ivs;
    Value p0, q0;
  };

  /// The contiguous range [begin, end) of tiles that `launch`'s block
  /// takes: ceil(work / grid) of them, fewer in the last blocks.
  std::pair<Value, Value> blockRange(OpBuilder &b, Location loc, gpu::LaunchOp launch) const {
    Value range = arith::CeilDivUIOp::create(b, loc, work, launch.getGridSize().x);
    Value begin = arith::MulIOp::create(b, loc, launch.getBlockIds().x, range);
    Value end = arith::MinUIOp::create(b, loc, arith::AddIOp::create(b, loc, begin, range), work);
    return {begin, end};
  }

  /// Tile `item`'s coordinates in item order, fastest first: its tile
  /// along q, its tile along p, then its iterations along the other
  /// dimensions, innermost first.
  SmallVector<Value> coordinates(OpBuilder &b, Location loc, Value item) const {
    SmallVector<Value> limit = limits();
    SmallVector<Value> coords;
    Value rest = item;
    for (Value count : ArrayRef<Value>(limit).drop_back()) {
      coords.push_back(arith::RemUIOp::create(b, loc, rest, count));
      rest = arith::DivUIOp::create(b, loc, rest, count);
    }
    coords.push_back(rest); // the slowest needs no remainder: item < work
    return coords;
  }

  /// The coordinates of the tile after `coords` in item order: the fastest
  /// one plus one, carried into the next where it reaches its count (no
  /// division, which costs about twenty instructions a thread).
  SmallVector<Value> advance(OpBuilder &b, Location loc, ArrayRef<Value> coords) const {
    SmallVector<Value> limit = limits();
    SmallVector<Value> next(coords);
    Value one = indexConstant(b, loc, 1), zero = indexConstant(b, loc, 0);
    Value carry;
    for (size_t i = 0; i < coords.size(); ++i) {
      Value bumped = arith::AddIOp::create(b, loc, coords[i], one);
      bool last = i + 1 == coords.size();
      Value wraps = last ? Value()
                         : arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, bumped, limit[i])
                               .getResult();
      if (wraps)
        bumped = arith::SelectOp::create(b, loc, wraps, zero, bumped);
      next[i] =
          carry ? arith::SelectOp::create(b, loc, carry, bumped, coords[i]).getResult() : bumped;
      if (last)
        break;
      carry = carry ? arith::AndIOp::create(b, loc, carry, wraps).getResult() : wraps;
    }
    return next;
  }

  /// The tile at `coords`.
  Tile tileAt(OpBuilder &b, Location loc, ArrayRef<Value> coords) const {
    Tile t;
    t.ivs.resize(loop.getNumLoops());
    for (auto [i, d] : llvm::enumerate(others))
      t.ivs[d] = ivAt(b, loc, d, coords[coords.size() - 1 - i]);
    t.q0 = arith::MulIOp::create(b, loc, coords[0], indexConstant(b, loc, side));
    t.p0 = arith::MulIOp::create(b, loc, coords[1], indexConstant(b, loc, side));
    return t;
  }

  /// The coordinates' counts, in their order.
  SmallVector<Value> limits() const {
    SmallVector<Value> l{tilesQ, tilesP};
    for (unsigned d : llvm::reverse(others))
      l.push_back(counts[d]);
    return l;
  }

  /// Whether tile `t` lies wholly inside the loop's bounds (all tiles but
  /// the last along p and along q).
  Value whole(OpBuilder &b, Location loc, const Tile &t) const {
    auto fits = [&](unsigned d, Value origin) {
      return arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ule,
          arith::AddIOp::create(b, loc, origin, indexConstant(b, loc, side)), counts[d]);
    };
    Value pFits = fits(plan.p, t.p0);
    Value qFits = fits(plan.q, t.q0);
    return arith::AndIOp::create(b, loc, pFits, qFits);
  }

  /// `emit(builder, partial)` for whole tiles (partial false: no clamps,
  /// no guards, fewer instructions per element, which the 64-bit index
  /// arithmetic makes count) and for the rest.
  void splitWhole(OpBuilder &b, Location loc, const Tile &t,
                  function_ref<void(OpBuilder &, bool)> emit) const {
    auto choice = scf::IfOp::create(b, loc, whole(b, loc, t), /*withElseRegion=*/true);
    OpBuilder wholeBuilder = OpBuilder::atBlockBegin(&choice.getThenRegion().front());
    emit(wholeBuilder, /*partial=*/false);
    OpBuilder partialBuilder = OpBuilder::atBlockBegin(&choice.getElseRegion().front());
    emit(partialBuilder, /*partial=*/true);
  }

  /// Clones the body's ops for each of `mappings` (iterations of the
  /// loop), interleaved op by op so that their loads are in flight
  /// together; `stagedValue(i, k)` replaces staged load i in iteration k;
  /// with `valid`, iteration k stores only where valid[k]. With `chunk`
  /// lanes (mappings k * chunk + l: lane l of a chunk along p), load i of
  /// plan.alongP is one vector a chunk, through alongPViews[i].
  void emitBody(OpBuilder &b, Location loc, MutableArrayRef<IRMapping> mappings,
                function_ref<Value(unsigned, size_t)> stagedValue, ArrayRef<Value> valid,
                int64_t chunk = 1, ArrayRef<Value> alongPViews = {},
                ArrayRef<int> alongPSwaps = {}) const {
    for (Operation &op : loop.getBody()->without_terminator()) {
      auto stagedAt = llvm::find(plan.staged, &op);
      auto alongPAt = llvm::find(plan.alongP, &op);
      if (chunk > 1 && alongPAt != plan.alongP.end()) {
        size_t i = alongPAt - plan.alongP.begin();
        auto load = llvm::cast<memref::LoadOp>(op);
        for (size_t k = 0; k < mappings.size(); k += chunk) {
          SmallVector<Value> indices = mapped(mappings[k], load.getIndices());
          if (alongPSwaps[i] >= 0)
            std::swap(indices[alongPSwaps[i]], indices.back());
          Value vec = vectorLoad(b, loc, alongPViews[i], indices, chunk);
          unpackLanes(b, loc, vec, load.getResult(), mappings.slice(k, chunk));
        }
        continue;
      }
      for (auto [k, m] : llvm::enumerate(mappings)) {
        if (stagedAt != plan.staged.end()) {
          m.map(op.getResult(0), stagedValue(stagedAt - plan.staged.begin(), k));
        } else if (isa<memref::StoreOp>(op) && !valid.empty()) {
          auto inRange = scf::IfOp::create(b, loc, valid[k], /*withElseRegion=*/false);
          OpBuilder sb = OpBuilder::atBlockBegin(&inRange.getThenRegion().front());
          sb.clone(op, m);
        } else {
          b.clone(op, m);
        }
      }
    }
  }
};

/// The scalar form: each thread loads single elements, T = `side` of them
/// a tile row; a block takes a contiguous range of kTilesPerBlock tiles,
/// one at a time, their coordinates advanced from the first's. H200,
/// softmax of a column-major view at 16383 x 4096 / 4095 x 65536 (rows
/// no whole number of chunks): f32 41.1 / 45.3% of copy with a tile a
/// block, 45.8 / 48.7% with four; f16 29.1 / 31.6 -> 31.7 / 34.5%.
/// The scalar form's shared tiles: one per staged load of `plan`, `side`
/// rows padded by 4 bytes (each row's elements: its pitch).
struct ScalarTileArrays {
  SmallVector<int64_t> pitch;
  SmallVector<SharedArray> arrays;
};
ScalarTileArrays scalarTileArrays(const TransposePlan &plan, int64_t side) {
  ScalarTileArrays t;
  for (Operation *load : plan.staged) {
    int64_t bytes = elementBytes(llvm::cast<memref::LoadOp>(load).getMemRef());
    t.pitch.push_back(side + std::max<int64_t>(1, 4 / bytes));
    t.arrays.push_back({load->getResult(0).getType(), side * t.pitch.back()});
  }
  return t;
}

void buildScalarTiles(OpBuilder &b, Location loc, const TileGrid &g) {
  const TransposePlan &plan = g.plan;
  scf::ParallelOp loop = g.loop;
  unsigned rank = loop.getNumLoops(), p = plan.p, q = plan.q;
  const int64_t side = g.side;
  const int64_t rowsPerPass = kTileThreads / side;
  const int64_t perThread = side * side / kTileThreads;
  ScalarTileArrays shared = scalarTileArrays(plan, side);
  const SmallVector<int64_t> &pitch = shared.pitch;
  const SmallVector<SharedArray> &arrays = shared.arrays;
  Value sharedSize =
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), sharedArraysBytes(arrays));

  buildLaunchOver(b, loc, g.work, indexConstant(b, loc, kTilesPerBlock),
                  indexConstant(b, loc, kTileThreads), [&](OpBuilder &ib, gpu::LaunchOp launch) {
    auto c = [&](int64_t v) { return indexConstant(ib, loc, v); };
    SmallVector<Value> tiles = sharedArrays(ib, loc, arrays);
    Value tid = launch.getThreadIds().x;
    Value tidMod = arith::RemUIOp::create(ib, loc, tid, c(side));
    Value tidDiv = arith::DivUIOp::create(ib, loc, tid, c(side));
    SmallVector<Value> last(rank);
    for (unsigned d : {p, q})
      last[d] = arith::SubIOp::create(ib, loc, g.counts[d], c(1));

    // A contiguous range of tiles a block, its first decoded once.
    auto [begin, end] = g.blockRange(ib, loc, launch);
    auto items = scf::ForOp::create(ib, loc, begin, end, c(1), g.coordinates(ib, loc, begin));
    OpBuilder lb = OpBuilder::atBlockBegin(items.getBody());
    SmallVector<Value> coords(items.getRegionIterArgs());
    TileGrid::Tile tile = g.tileAt(lb, loc, coords);

    g.splitWhole(lb, loc, tile, [&](OpBuilder &tb, bool partial) {
      auto tc = [&](int64_t v) { return indexConstant(tb, loc, v); };
      SmallVector<Value> at = tile.ivs;
      // Position `local` of the tile along dimension d and whether it
      // exists; in a partial tile, clamped to the last iteration.
      auto along = [&](unsigned d, Value origin, Value local) -> std::pair<Value, Value> {
        Value k = arith::AddIOp::create(tb, loc, origin, local);
        if (!partial)
          return {g.ivAt(tb, loc, d, k), Value()};
        Value exists = arith::CmpIOp::create(tb, loc, arith::CmpIPredicate::ult, k, g.counts[d]);
        return {g.ivAt(tb, loc, d, arith::SelectOp::create(tb, loc, exists, k, last[d])),
                exists};
      };
      // A thread's own column of the tile along p (loads) and along q (compute).
      Value pOfThread = along(p, tile.p0, tidMod).first;
      auto [qOfThread, qExists] = along(q, tile.q0, tidMod);

      // Staged loads, threads consecutive along p: all loads first, so that
      // they are in flight together, then the shared stores.
      SmallVector<std::pair<Value, Value>> loaded; // (value, tile position), by tile
      SmallVector<unsigned> tileOf;
      for (int64_t k = 0; k < perThread; ++k) {
        Value qLocal = arith::AddIOp::create(tb, loc, tidDiv, tc(k * rowsPerPass));
        at[p] = pOfThread;
        at[q] = along(q, tile.q0, qLocal).first;
        IRMapping m;
        m.map(loop.getInductionVars(), at);
        for (auto [i, load] : llvm::enumerate(plan.staged)) {
          Value pos = arith::AddIOp::create(
              tb, loc, arith::MulIOp::create(tb, loc, qLocal, tc(pitch[i])), tidMod);
          loaded.push_back({tb.clone(*load, m)->getResult(0), pos});
          tileOf.push_back(i);
        }
      }
      for (auto [entry, i] : llvm::zip(loaded, tileOf))
        memref::StoreOp::create(tb, loc, entry.first, tiles[i], ValueRange{entry.second});
      gpu::BarrierOp::create(tb, loc);

      // The body, threads consecutive along q; in a partial tile, stores
      // only where they exist.
      SmallVector<IRMapping> mappings(perThread);
      SmallVector<Value> valid;
      SmallVector<Value> tileAt(perThread * plan.staged.size());
      for (int64_t k = 0; k < perThread; ++k) {
        Value pLocal = arith::AddIOp::create(tb, loc, tidDiv, tc(k * rowsPerPass));
        auto [pIv, pExists] = along(p, tile.p0, pLocal);
        at[p] = pIv;
        at[q] = qOfThread;
        if (partial)
          valid.push_back(arith::AndIOp::create(tb, loc, pExists, qExists));
        mappings[k].map(loop.getInductionVars(), at);
        for (unsigned i = 0; i < plan.staged.size(); ++i)
          tileAt[k * plan.staged.size() + i] = arith::AddIOp::create(
              tb, loc, arith::MulIOp::create(tb, loc, tidMod, tc(pitch[i])), pLocal);
      }
      g.emitBody(tb, loc, mappings, [&](unsigned i, size_t k) -> Value {
        return memref::LoadOp::create(tb, loc, tiles[i],
                                      ValueRange{tileAt[k * plan.staged.size() + i]});
      }, valid);
      // The next tile's loads overwrite the shared tiles.
      gpu::BarrierOp::create(tb, loc);
    });
    scf::YieldOp::create(lb, loc, g.advance(lb, loc, coords));
  }, sharedSize);
}

/// The vector form (2- and 4-byte elements, `lanes` of them a 16-byte
/// chunk): loading, threads take the chunks of a tile row by row (rows
/// along q); the shared tile holds chunk j of row r at position j ^ (r % 8),
/// so that the eight threads of a row's eight chunks, and the eight
/// threads reading the chunks at one position of eight consecutive rows,
/// hit distinct banks. Computing, a thread takes a chunk: `lanes`
/// consecutive iterations along p at one along q, threads consecutive
/// along q. `views` are the staged loads' buffers with their contiguous
/// dimension last (swaps[i]: the dimension swapped with the last, or -1).
/// The ring has `stages` tiles of each staged load (vectorTileStages).
void buildVectorTiles(OpBuilder &b, Location loc, const TileGrid &g, ArrayRef<Value> views,
                      ArrayRef<int> swaps, ArrayRef<Value> alongPViews, ArrayRef<int> alongPSwaps,
                      int64_t lanes, int64_t stages) {
  const TransposePlan &plan = g.plan;
  scf::ParallelOp loop = g.loop;
  unsigned p = plan.p, q = plan.q;
  const int64_t side = g.side;
  const int64_t chunksPerRow = side / lanes;
  const int64_t perThread = nerve::gpumap::vectorChunksPerThread(lanes);
  const int64_t threads = side * chunksPerRow / perThread;
  const int64_t perBlock = kTilesPerBlock;

  // A ring of `stages` shared tiles per staged load.
  SmallVector<SharedArray> arrays;
  for (Operation *load : plan.staged)
    arrays.push_back({load->getResult(0).getType(), stages * side * side});
  Value sharedSize =
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), sharedArraysBytes(arrays));

  buildLaunchOver(b, loc, g.work, indexConstant(b, loc, perBlock),
                  indexConstant(b, loc, threads), [&](OpBuilder &ib, gpu::LaunchOp launch) {
    auto c = [&](int64_t v) { return indexConstant(ib, loc, v); };
    SmallVector<Value> tiles = sharedArrays(ib, loc, arrays);
    Value tid = launch.getThreadIds().x;
    Value lastChunk = arith::SubIOp::create(ib, loc, g.counts[p], c(lanes));
    Value lastQ = arith::SubIOp::create(ib, loc, g.counts[q], c(1));
    // Chunk k of a thread: tid + k * threads, numbered row by row while
    // loading (rows along q), column by column while computing.
    SmallVector<Value> loadRow, loadChunk, computeRow, computeChunk;
    for (int64_t k = 0; k < perThread; ++k) {
      Value chunk = arith::AddIOp::create(ib, loc, tid, c(k * threads));
      loadRow.push_back(arith::DivUIOp::create(ib, loc, chunk, c(chunksPerRow)));
      loadChunk.push_back(arith::RemUIOp::create(ib, loc, chunk, c(chunksPerRow)));
      computeRow.push_back(arith::RemUIOp::create(ib, loc, chunk, c(side)));
      computeChunk.push_back(arith::DivUIOp::create(ib, loc, chunk, c(side)));
    }
    // Where chunk `chunk` of tile row `row` lies in the ring's tile that
    // begins at `stageBase`.
    auto swizzled = [&](OpBuilder &sb, Value stageBase, Value row, Value chunk) -> Value {
      auto sc = [&](int64_t v) { return indexConstant(sb, loc, v); };
      Value position = arith::XOrIOp::create(
          sb, loc, chunk, arith::RemUIOp::create(sb, loc, row, sc(8)));
      Value rowStart = arith::MulIOp::create(sb, loc, row, sc(side));
      Value column = arith::MulIOp::create(sb, loc, position, sc(lanes));
      Value inTile = arith::AddIOp::create(sb, loc, rowStart, column);
      return arith::AddIOp::create(sb, loc, stageBase, inTile);
    };

    // Asynchronous copies of this thread's chunks of tile `item`, every
    // staged load's, into the ring's tiles at `stageBase` (clamped to the
    // last chunk and row in a tile at the edge), as one group; an empty
    // group past the last tile, so that every thread counts groups alike.
    auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
    auto issueTile = [&](OpBuilder &ob, Value exists, ArrayRef<Value> coords,
                         Value stageBase) -> Value {
      auto inRange =
          scf::IfOp::create(ob, loc, TypeRange{tokenType}, exists, /*withElseRegion=*/true);
      OpBuilder tb = OpBuilder::atBlockBegin(&inRange.getThenRegion().front());
      TileGrid::Tile tile = g.tileAt(tb, loc, coords);
      SmallVector<Value> tokens;
      for (int64_t k = 0; k < perThread; ++k) {
        Value pk = arith::MinUIOp::create(
            tb, loc,
            arith::AddIOp::create(tb, loc, tile.p0,
                                  arith::MulIOp::create(tb, loc, loadChunk[k],
                                                        indexConstant(tb, loc, lanes))),
            lastChunk);
        Value qk = arith::MinUIOp::create(
            tb, loc, arith::AddIOp::create(tb, loc, tile.q0, loadRow[k]), lastQ);
        SmallVector<Value> at = tile.ivs;
        at[p] = g.ivAt(tb, loc, p, pk);
        at[q] = g.ivAt(tb, loc, q, qk);
        IRMapping m;
        m.map(loop.getInductionVars(), at);
        Value into = swizzled(tb, stageBase, loadRow[k], loadChunk[k]);
        for (auto [i, op] : llvm::enumerate(plan.staged)) {
          auto load = llvm::cast<memref::LoadOp>(op);
          SmallVector<Value> indices = mapped(m, load.getIndices());
          if (swaps[i] >= 0)
            std::swap(indices[swaps[i]], indices.back());
          tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
              tb, loc, tokenType, tiles[i], ValueRange{into}, views[i], indices,
              tb.getIndexAttr(lanes), /*srcElements=*/Value(), /*bypassL1=*/tb.getUnitAttr()));
        }
      }
      scf::YieldOp::create(
          tb, loc, ValueRange{nvgpu::DeviceAsyncCreateGroupOp::create(tb, loc, tokenType, tokens)});
      OpBuilder eb = OpBuilder::atBlockBegin(&inRange.getElseRegion().front());
      scf::YieldOp::create(
          eb, loc,
          ValueRange{nvgpu::DeviceAsyncCreateGroupOp::create(eb, loc, tokenType, ValueRange{})});
      return inRange.getResult(0);
    };

    // A block takes a contiguous range of tiles, its first decoded once and
    // the others reached by advancing. The ring's first stages-1 tiles, then
    // one more each turn; the loop carries the stage of its tile, the newest
    // group, and the coordinates of its tile and of the one to copy next.
    auto [begin, end] = g.blockRange(ib, loc, launch);
    const int64_t tileElements = side * side;
    SmallVector<Value> first = g.coordinates(ib, loc, begin);
    SmallVector<Value> coords = first;
    Value newest;
    for (int64_t s = 0; s + 1 < stages; ++s) {
      Value exists = arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::ult,
                                           arith::AddIOp::create(ib, loc, begin, c(s)), end);
      newest = issueTile(ib, exists, coords, c(s * tileElements));
      coords = g.advance(ib, loc, coords);
    }
    const size_t rankOfCoords = first.size();
    SmallVector<Value> carried{c(0), newest};
    llvm::append_range(carried, first);
    llvm::append_range(carried, coords);
    auto items = scf::ForOp::create(ib, loc, begin, end, c(1), carried);
    OpBuilder lb = OpBuilder::atBlockBegin(items.getBody());
    auto lc = [&](int64_t v) { return indexConstant(lb, loc, v); };
    Value item = items.getInductionVar();
    ValueRange state = items.getRegionIterArgs();
    Value stage = state[0];
    SmallVector<Value> current(state.slice(2, rankOfCoords));
    SmallVector<Value> aheadCoords(state.slice(2 + rankOfCoords, rankOfCoords));
    // This tile's group done (the stages-2 after it may stay in flight),
    // then a barrier: every thread's chunks are in, and every thread is
    // done with the previous tile, whose stage the next copies overwrite.
    nvgpu::DeviceAsyncWaitOp::create(lb, loc, state[1], lb.getI32IntegerAttr(stages - 2));
    gpu::BarrierOp::create(lb, loc);
    Value wraps = arith::CmpIOp::create(lb, loc, arith::CmpIPredicate::eq, stage, lc(0));
    Value last = lc(stages - 1);
    Value before = arith::SubIOp::create(lb, loc, stage, lc(1));
    Value previous = arith::SelectOp::create(lb, loc, wraps, last, before);
    Value aheadExists =
        arith::CmpIOp::create(lb, loc, arith::CmpIPredicate::ult,
                              arith::AddIOp::create(lb, loc, item, lc(stages - 1)), end);
    Value issued = issueTile(lb, aheadExists, aheadCoords,
                             arith::MulIOp::create(lb, loc, previous, lc(tileElements)));
    Value stageBase = arith::MulIOp::create(lb, loc, stage, lc(tileElements));
    TileGrid::Tile tile = g.tileAt(lb, loc, current);
    g.splitWhole(lb, loc, tile, [&](OpBuilder &tb, bool partial) {
      auto tc = [&](int64_t v) { return indexConstant(tb, loc, v); };
      SmallVector<IRMapping> mappings(perThread * lanes);
      SmallVector<Value> valid, staged(perThread * lanes * plan.staged.size());
      for (int64_t k = 0; k < perThread; ++k) {
        Value pk = arith::AddIOp::create(
            tb, loc, tile.p0, arith::MulIOp::create(tb, loc, computeChunk[k], tc(lanes)));
        Value qk = arith::AddIOp::create(tb, loc, tile.q0, computeRow[k]);
        if (partial) {
          // Whole chunks (the host checked that p's count is a multiple of
          // the vector): the chunk exists or not as a whole.
          Value pIn = arith::CmpIOp::create(tb, loc, arith::CmpIPredicate::ult, pk, g.counts[p]);
          Value qIn = arith::CmpIOp::create(tb, loc, arith::CmpIPredicate::ult, qk, g.counts[q]);
          valid.append(lanes, arith::AndIOp::create(tb, loc, pIn, qIn));
          pk = arith::MinUIOp::create(tb, loc, pk, lastChunk);
          qk = arith::MinUIOp::create(tb, loc, qk, lastQ);
        }
        SmallVector<Value> at = tile.ivs;
        at[q] = g.ivAt(tb, loc, q, qk);
        for (int64_t l = 0; l < lanes; ++l) {
          Value pl = l == 0 ? pk : arith::AddIOp::create(tb, loc, pk, tc(l)).getResult();
          at[p] = g.ivAt(tb, loc, p, pl);
          mappings[k * lanes + l].map(loop.getInductionVars(), at);
        }
        for (unsigned i = 0; i < plan.staged.size(); ++i) {
          Value vec = vectorLoad(
              tb, loc, tiles[i],
              ValueRange{swizzled(tb, stageBase, computeRow[k], computeChunk[k])}, lanes);
          for (int64_t l = 0; l < lanes; ++l)
            staged[(k * lanes + l) * plan.staged.size() + i] =
                vector::ExtractOp::create(tb, loc, vec, l);
        }
      }
      g.emitBody(
          tb, loc, mappings,
          [&](unsigned i, size_t e) { return staged[e * plan.staged.size() + i]; }, valid, lanes,
          alongPViews, alongPSwaps);
    });
    Value next = arith::AddIOp::create(lb, loc, stage, lc(1));
    next = arith::SelectOp::create(
        lb, loc, arith::CmpIOp::create(lb, loc, arith::CmpIPredicate::eq, next, lc(stages)), lc(0),
        next);
    SmallVector<Value> yielded{next, issued};
    llvm::append_range(yielded, g.advance(lb, loc, current));
    llvm::append_range(yielded, g.advance(lb, loc, aheadCoords));
    scf::YieldOp::create(lb, loc, yielded);
  }, sharedSize);
}

/// Elements of a 16-byte vector for the vector form of `plan`'s loop: its
/// staged loads and stores all of 2 or 4 bytes an element, the staged
/// loads' buffers (defined outside the loop) vector-accessible along p
/// through a view that makes p's dimension their last, p's step 1. 0 when
/// the scalar form must do.
int64_t vectorTileLanes(scf::ParallelOp loop, const TransposePlan &plan,
                        SmallVectorImpl<int> &swaps) {
  if (getConstantIntValue(loop.getStep()[plan.p]) != 1)
    return 0;
  int64_t bytes = 0;
  auto sameBytes = [&](Value memref) {
    int64_t b = elementBytes(memref);
    if (bytes == 0)
      bytes = b;
    return b == bytes && (b == 2 || b == 4);
  };
  for (Operation *op : plan.staged) {
    auto load = llvm::cast<memref::LoadOp>(op);
    MemRefType type = load.getMemRefType();
    unsigned along = *contiguousDim(type);
    int swap = along + 1 == type.getRank() ? -1 : static_cast<int>(along);
    if (!sameBytes(load.getMemRef()) ||
        loop->isAncestor(load.getMemRef().getParentBlock()->getParentOp()) ||
        !vectorLanesOf(swap < 0 ? type : transposedType(type, swap)))
      return 0;
    swaps.push_back(swap);
  }
  for (auto store : loop.getBody()->getOps<memref::StoreOp>())
    if (!sameBytes(store.getMemRef()))
      return 0;
  return 16 / bytes;
}

/// Tiles in the vector form's ring for `plan`'s loop, `lanes` elements a
/// 16-byte chunk (0: the scalar form must do).
int64_t vectorTileStages(const TransposePlan &plan, int64_t lanes) {
  return nerve::gpumap::vectorTileStages(static_cast<int64_t>(plan.staged.size()), lanes);
}


/// Elements along a tile's side: a line of 128 bytes of the widest
/// element `plan` stages or `loop` stores.
int64_t tileSide(scf::ParallelOp loop, const TransposePlan &plan) {
  int64_t widest = 1;
  for (Operation *load : plan.staged)
    widest = std::max(widest, elementBytes(llvm::cast<memref::LoadOp>(load).getMemRef()));
  for (auto store : loop.getBody()->getOps<memref::StoreOp>())
    widest = std::max(widest, elementBytes(store.getMemRef()));
  return nerve::gpumap::scalarTileSide(widest);
}

} // namespace

bool tiledTransposeApplies(scf::ParallelOp loop) {
  std::optional<TransposePlan> plan = matchTiledTranspose(loop);
  if (!plan)
    return false;
  // A static count along p under half a tile keeps the usual mapping.
  unsigned p = plan->p;
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()[p]);
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound()[p]);
  std::optional<int64_t> step = getConstantIntValue(loop.getStep()[p]);
  if (!lb || !ub || !step)
    return true;
  int64_t count = *ub <= *lb ? 0 : llvm::divideCeil(*ub - *lb, *step);
  return count >= tileSide(loop, *plan) / 2;
}

FailureOr<scf::ParallelOp> mapTiledTranspose(scf::ParallelOp loop) {
  std::optional<TransposePlan> plan = matchTiledTranspose(loop);
  if (!plan)
    return failure();
  unsigned rank = loop.getNumLoops(), p = plan->p, q = plan->q;
  const int64_t side = tileSide(loop, *plan);

  Location loc = loop.getLoc();
  OpBuilder b(loop);
  // The tiles' size and count come with the form (TileGrid::sized).
  TileGrid grid{loop, *plan, tripCounts(b, loop).first, {}, {}, {}, {}, 0};
  // Fewer than half a tile along p would leave most of every tile idle:
  // such loops keep the usual mapping (a copy of the loop, for the caller).
  Value tall = b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::uge, grid.counts[p],
                                             indexConstant(b, loc, side / 2));
  std::optional<int64_t> known = getConstantIntValue(tall);
  if (known && !*known)
    return failure();
  scf::ParallelOp fallback;
  if (!known) {
    auto choice = scf::IfOp::create(b, loc, tall, /*withElseRegion=*/true);
    OpBuilder eb = OpBuilder::atBlockBegin(&choice.getElseRegion().front());
    fallback = llvm::cast<scf::ParallelOp>(eb.clone(*loop));
    b.setInsertionPointToStart(&choice.getThenRegion().front());
  }
  for (unsigned d = 0; d < rank; ++d)
    if (d != p && d != q)
      grid.others.push_back(d);

  // By 16-byte chunks where a host check finds the staged buffers aligned
  // (and p's count a whole number of them), else by elements.
  SmallVector<int> swaps;
  int64_t lanes = vectorTileLanes(loop, *plan, swaps);
  int64_t stages = lanes > 1 ? vectorTileStages(*plan, lanes) : 0;
  if (stages == 0)
    lanes = 0;
  SmallVector<Value> views, alongPViews;
  SmallVector<int> alongPSwaps;
  Value fits;
  if (lanes > 1) {
    // A buffer through a view whose last dimension is its contiguous one.
    auto viewOf = [&](Value memref, int swap) -> Value {
      if (swap < 0)
        return memref;
      return memref::TransposeOp::create(
          b, loc, memref,
          AffineMapAttr::get(swapWithLastMap(llvm::cast<MemRefType>(memref.getType()).getRank(),
                                             swap, b.getContext())));
    };
    for (auto [op, swap] : llvm::zip(plan->staged, swaps))
      views.push_back(viewOf(llvm::cast<memref::LoadOp>(op).getMemRef(), swap));
    // Loads along p of 2- or 4-byte elements take a vector a chunk of 16-bit
    // data (8 lanes); their buffers join the host check.
    llvm::erase_if(plan->alongP, [&](Operation *op) {
      int64_t bytes = elementBytes(llvm::cast<memref::LoadOp>(op).getMemRef());
      return !nerve::gpumap::loadsAlongPTakeVectors(lanes, bytes);
    });
    for (Operation *op : plan->alongP) {
      auto load = llvm::cast<memref::LoadOp>(op);
      unsigned along = *contiguousDim(load.getMemRefType());
      alongPSwaps.push_back(along + 1 == load.getMemRefType().getRank() ? -1
                                                                        : static_cast<int>(along));
      alongPViews.push_back(viewOf(load.getMemRef(), alongPSwaps.back()));
    }
    SmallVector<Value> checked = views;
    llvm::append_range(checked, alongPViews);
    fits = vectorAccessesFit(b, loc, checked, lanes, grid.counts[p], loop.getLowerBound()[p]);
  }
  buildVectorsIfFit(b, loc, fits, lanes, [&](OpBuilder &fb, int64_t l) {
    if (l > 1)
      buildVectorTiles(fb, loc, grid.sized(fb, loc, kVectorTileSide), views, swaps, alongPViews,
                       alongPSwaps, l, stages);
    else
      buildScalarTiles(fb, loc, grid.sized(fb, loc, side));
  });
  loop.erase();
  return fallback;
}

} // namespace nerve::loop_mapping
