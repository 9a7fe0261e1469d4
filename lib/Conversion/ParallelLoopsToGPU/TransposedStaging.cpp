//===- TransposedStaging.cpp - blocks of per-thread rows through shared ---===//
//
// A parallel loop whose iterations each walk their own contiguous row in
// blocks (a time-minor neuron, [n, t]: every neuron's steps are one row)
// maps naturally to a thread per iteration, but then neighbouring threads
// read addresses a row apart: no access is coalesced (7% of the copy
// bandwidth on an H200 for LIF over [n, t]). Here the block of a walk that
// every thread reads or writes at once is staged through shared memory,
// transposed: the threads of a GPU block load the block's rows for all of
// the block's iterations together, along rows, into a shared tile; each
// thread then computes from its own row of the tile and writes its results
// into tiles that the threads store together, along rows, again.
//
//   for g in groups of B iterations (per GPU block):
//     for tb in blocks (uniform: the same for every iteration):
//       load the tile rows [g*B, g*B + B) x [tb, tb + K) of each input
//       barrier
//       compute, reading and writing tiles (row = this thread)
//       barrier
//       store the tile rows of each output
//
// The tiles live in dynamic shared memory, within the 48 KiB every GPU
// gives a block (as many threads a block as fit, up to the block size).
// When a host check finds the buffers aligned, every access is a 16-byte
// vector (global loads and stores along rows, a thread's reads and writes
// of its own row), else a scalar; both launches are built. Vector loads
// into the tiles are asynchronous copies (cp.async), which hold no
// registers. Rows are padded
// by one vector (or element) so that the threads reading their own rows
// hit different shared memory banks.
//
//===----------------------------------------------------------------------===//

#include "LoopMapping.h"

#include "nerve/Target/ChipProfile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;

namespace nerve::loop_mapping {
namespace {

/// The widest block of a walk that is staged (columns of a tile: 256 bytes
/// of 16-bit elements).
constexpr int64_t kMaxTileWidth = 128;

/// Which values are the same for every iteration of a parallel loop (so
/// that loops bounded by them run in step on every thread of a block):
/// values from outside it, the indices of sequential loops with uniform
/// bounds, and pure ops of those.
class Uniformity {
public:
  explicit Uniformity(scf::ParallelOp loop) : loop(loop) {}

  bool isUniform(Value v) {
    if (auto it = known.find(v); it != known.end())
      return it->second;
    bool uniform = compute(v);
    known[v] = uniform;
    return uniform;
  }

  bool hasUniformBounds(scf::ForOp f) {
    return isUniform(f.getLowerBound()) && isUniform(f.getUpperBound()) &&
           isUniform(f.getStep());
  }

private:
  bool compute(Value v) {
    Operation *def = v.getDefiningOp();
    if (!def) {
      if (!loop->isAncestor(llvm::cast<BlockArgument>(v).getOwner()->getParentOp()))
        return true;
      scf::ForOp f = scf::getForInductionVarOwner(v);
      return f && hasUniformBounds(f);
    }
    if (!loop->isAncestor(def))
      return true;
    if (def->getNumRegions() != 0 || !isMemoryEffectFree(def))
      return false;
    return llvm::all_of(def->getOperands(), [&](Value o) { return isUniform(o); });
  }

  scf::ParallelOp loop;
  llvm::DenseMap<Value, bool> known;
};

/// `v` as `base + offset` with a constant offset.
std::pair<Value, int64_t> splitOffset(Value v) {
  if (auto add = v.getDefiningOp<arith::AddIOp>()) {
    if (auto c = getConstantIntValue(add.getRhs()))
      return {add.getLhs(), *c};
    if (auto c = getConstantIntValue(add.getLhs()))
      return {add.getRhs(), *c};
  }
  if (auto sub = v.getDefiningOp<arith::SubIOp>())
    if (auto c = getConstantIntValue(sub.getRhs()))
      return {sub.getLhs(), -*c};
  return {v, 0};
}

/// One buffer's tile: the columns [base, base + width) of the rows of a
/// group of iterations.
struct Tile {
  bool loaded = false, stored = false;
  llvm::SmallBitVector offsets; ///< the columns the loop accesses
  int64_t width() const { return offsets.size(); }
};

/// A sequential loop of the parallel body staged through tiles.
struct StagedLoop {
  scf::ForOp loop;
  Value base; ///< the first column of the block an iteration accesses
  llvm::MapVector<Value, Tile> tiles; ///< by buffer, in first-access order
  llvm::DenseMap<Operation *, int64_t> offsets; ///< staged accesses: column - base
};

/// `f` (in `loop`'s body) as a walk in blocks: each iteration accesses, as
/// direct children of its body, buffers at [the parallel indices..., base +
/// c] with a uniform base and constant c in [0, kMaxTileWidth), along their
/// contiguous dimension. Each buffer it stores so is written at every
/// column of its tile exactly once and accessed no other way in `f`; a
/// buffer it loads so is not written in `f`. Other accesses stay as they
/// are (a step's load from the block before, a per-iteration store).
std::optional<StagedLoop> matchStagedLoop(scf::ForOp f, scf::ParallelOp loop,
                                          Uniformity &uniform) {
  if (!uniform.hasUniformBounds(f))
    return std::nullopt;
  StagedLoop staged;
  staged.loop = f;
  for (Operation &op : f.getBody()->without_terminator()) {
    Value memref = memrefOf(&op);
    if (!memref)
      continue;
    auto type = llvm::cast<MemRefType>(memref.getType());
    ValueRange indices = indicesOf(&op);
    if (type.getRank() < 2 || !vectorLanesOf(type) ||
        !llvm::equal(indices.drop_back(), loop.getInductionVars()))
      continue;
    auto [base, offset] = splitOffset(indices.back());
    if (offset < 0 || offset >= kMaxTileWidth || !uniform.isUniform(base))
      continue;
    if (staged.base && base != staged.base)
      return std::nullopt; // blocks at two places at once (a look-ahead)
    staged.base = base;
    staged.offsets[&op] = offset;
    Tile &tile = staged.tiles[memref];
    tile.stored |= isa<memref::StoreOp>(op);
    tile.loaded |= isa<memref::LoadOp>(op);
    if (tile.width() <= offset)
      tile.offsets.resize(offset + 1);
    if (isa<memref::StoreOp>(op) && tile.offsets.test(offset))
      return std::nullopt; // the same column written twice
    tile.offsets.set(offset);
  }
  // A block of one column would stage nothing (a step at a time).
  if (llvm::none_of(staged.tiles, [](auto &entry) { return entry.second.width() > 1; }))
    return std::nullopt;

  // Nothing else in the loop may write memory but plain stores, nor touch
  // a staged buffer behind the tiles' back: an input's other accesses may
  // only load it, an output has none.
  bool ok = true;
  f.getBody()->walk([&](Operation *op) {
    Value memref = memrefOf(op);
    auto it = memref ? staged.tiles.find(memref) : staged.tiles.end();
    if (it != staged.tiles.end() && !staged.offsets.count(op))
      ok &= isa<memref::LoadOp>(op) && !it->second.stored;
    if (!memref && op->getNumRegions() == 0 && !isMemoryEffectFree(op))
      ok = false;
  });
  for (auto &[memref, tile] : staged.tiles)
    if (tile.stored && (tile.loaded || !tile.offsets.all()))
      ok = false; // an output tile is written whole, never read back
  if (!ok)
    return std::nullopt;
  return staged;
}

/// Moves `op` to just before the first op of its block that uses its
/// result (directly or in a nested region).
void sinkToFirstUse(Operation *op) {
  Operation *first = nullptr;
  for (Operation *user : op->getUsers()) {
    Operation *at = op->getBlock()->findAncestorOpInBlock(*user);
    if (at && (!first || at->isBeforeInBlock(first)))
      first = at;
  }
  if (first && op->isBeforeInBlock(first))
    op->moveBefore(first);
}

/// Moves each memref.store in `root` (itself included) under `valid`.
void guardStores(OpBuilder &b, Operation *root, Value valid) {
  SmallVector<memref::StoreOp> stores;
  root->walk([&](memref::StoreOp store) { stores.push_back(store); });
  for (memref::StoreOp store : stores) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(store);
    auto inRange = scf::IfOp::create(b, store.getLoc(), valid, /*withElseRegion=*/false);
    store->moveBefore(inRange.getThenRegion().front().getTerminator());
  }
}

/// Whether `v` is a multiple of `lanes` on every iteration (a constant, a
/// product by or a sum of such, or the index of a loop that starts at and
/// steps by such).
bool isMultipleOf(Value v, int64_t lanes) {
  if (auto c = getConstantIntValue(v))
    return *c % lanes == 0;
  if (auto mul = v.getDefiningOp<arith::MulIOp>())
    return isMultipleOf(mul.getLhs(), lanes) || isMultipleOf(mul.getRhs(), lanes);
  if (auto add = v.getDefiningOp<arith::AddIOp>())
    return isMultipleOf(add.getLhs(), lanes) && isMultipleOf(add.getRhs(), lanes);
  if (auto f = scf::getForInductionVarOwner(v))
    return isMultipleOf(f.getLowerBound(), lanes) && isMultipleOf(f.getStep(), lanes);
  return false;
}

struct Builder {
  OpBuilder &b;
  Location loc;
  scf::ParallelOp loop;
  ArrayRef<Value> counts;
  Value total;
  int64_t threads;
  int64_t lanes;        ///< elements per access (1: scalars)
  Value tid;
  Value firstIteration; ///< the group's first flat iteration
  Value valid;          ///< whether this thread's iteration exists

  Value c(int64_t v) { return indexConstant(b, loc, v); }

  /// Position of (row, column) in a tile `width` wide. Rows are padded by
  /// one element for scalars (a thread reading its own row then hits
  /// another bank than its neighbours), by one vector for vectors (rows
  /// stay aligned; 16-byte accesses of eight neighbouring rows still fall
  /// in distinct bank groups).
  Value tileIndex(Value row, Value column, int64_t width) {
    return arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, row, c(width + lanes)),
                                 column);
  }

  /// Calls `fn(row, column)` for each access of a tile `width` wide (a
  /// vector of `lanes` elements each), thread-consecutive along rows: the
  /// threads' accesses are coalesced.
  void forEachAccess(int64_t width, function_ref<void(Value, Value)> fn) {
    int64_t perRow = width / lanes;
    for (int64_t r = 0; r < perRow; ++r) {
      Value e = arith::AddIOp::create(b, loc, tid, c(r * threads));
      Value column = arith::RemUIOp::create(b, loc, e, c(perRow));
      if (lanes > 1)
        column = arith::MulIOp::create(b, loc, column, c(lanes));
      fn(arith::DivUIOp::create(b, loc, e, c(perRow)), column);
    }
  }

  /// The parallel indices of row `row` of the group, clamped to the last
  /// iteration, and whether it exists.
  std::pair<SmallVector<Value>, Value> rowIndices(Value row) {
    Value flat = arith::AddIOp::create(b, loc, firstIteration, row);
    Value exists = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, flat, total);
    Value last = arith::SubIOp::create(b, loc, total, c(1));
    flat = arith::SelectOp::create(b, loc, exists, flat, last);
    return {delinearize(b, loc, loop, counts, flat), exists};
  }

  SmallVector<Value> withColumn(SmallVector<Value> indices, Value base, Value column) {
    indices.push_back(arith::AddIOp::create(b, loc, base, column));
    return indices;
  }

  Value load(Value memref, ValueRange indices) {
    if (lanes == 1)
      return memref::LoadOp::create(b, loc, memref, indices);
    return vectorLoad(b, loc, memref, indices, lanes);
  }

  void store(OpBuilder &at, Value v, Value memref, ValueRange indices) {
    if (lanes == 1)
      memref::StoreOp::create(at, loc, v, memref, indices);
    else
      vectorStore(at, loc, v, memref, indices);
  }

  /// Every thread loads its share of `memref`'s tile rows into `shared`,
  /// all in flight together. 16-byte vectors are asynchronous copies
  /// (`tokens` gathers them; they hold no registers, where a block of 64
  /// steps of three inputs loaded through registers took 192 a thread);
  /// scalars go through registers, all global loads first.
  void loadTile(Value memref, Value shared, Value base, int64_t width,
                SmallVectorImpl<Value> &tokens) {
    if (lanes > 1) {
      auto token = nvgpu::DeviceAsyncTokenType::get(b.getContext());
      forEachAccess(width, [&](Value row, Value column) {
        SmallVector<Value> indices = rowIndices(row).first;
        tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
            b, loc, token, shared, ValueRange{tileIndex(row, column, width)}, memref,
            withColumn(indices, base, column), b.getIndexAttr(lanes), /*srcElements=*/Value(),
            /*bypassL1=*/b.getUnitAttr()));
      });
      return;
    }
    SmallVector<std::pair<Value, Value>> loaded; // (value, tile index)
    forEachAccess(width, [&](Value row, Value column) {
      SmallVector<Value> indices = rowIndices(row).first;
      loaded.push_back({load(memref, withColumn(indices, base, column)),
                        tileIndex(row, column, width)});
    });
    for (auto [v, at] : loaded)
      store(b, v, shared, ValueRange{at});
  }

  /// Every thread stores its share of the tile rows in `shared` that exist.
  void storeTile(Value memref, Value shared, Value base, int64_t width) {
    forEachAccess(width, [&](Value row, Value column) {
      auto [indices, exists] = rowIndices(row);
      Value v = load(shared, ValueRange{tileIndex(row, column, width)});
      SmallVector<Value> at = withColumn(indices, base, column);
      auto inRange = scf::IfOp::create(b, loc, exists, /*withElseRegion=*/false);
      OpBuilder tb = OpBuilder::atBlockBegin(&inRange.getThenRegion().front());
      store(tb, v, memref, at);
    });
  }

  /// The staged copy of `s`, its tiles in `shared` (by buffer), `m` mapping
  /// the parallel body's values. With vectors, a thread reads its own rows
  /// of the input tiles and writes its rows of the output tiles by vectors,
  /// between the two barriers.
  void emitStaged(const StagedLoop &s, const llvm::DenseMap<Value, Value> &shared,
                  IRMapping &m) {
    scf::ForOp f = s.loop;
    auto staged = scf::ForOp::create(b, loc, m.lookupOrDefault(f.getLowerBound()),
                                     m.lookupOrDefault(f.getUpperBound()),
                                     m.lookupOrDefault(f.getStep()),
                                     mapped(m, f.getInitArgs()));
    // Built without a body builder, the loop has a terminator only when it
    // carries no values; the body is built whole here.
    Block *stagedBody = staged.getBody();
    if (!stagedBody->empty())
      stagedBody->back().erase();
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(stagedBody);
    m.map(f.getInductionVar(), staged.getInductionVar());
    m.map(f.getRegionIterArgs(), staged.getRegionIterArgs());

    Value row = tid;
    // A thread's vectors of its own rows: each read from an input tile
    // once, written to an output tile once its last lane is computed.
    llvm::DenseMap<Value, SmallVector<Value>> ownRow;  // input tile -> its vectors
    llvm::DenseMap<Value, SmallVector<Value>> results; // output tile -> its values
    SmallVector<Operation *> reads;                    // of the thread's own rows
    Operation *baseDef = s.base.getDefiningOp();
    bool inBody = baseDef && baseDef->getBlock() == f.getBody();
    auto loadTiles = [&] {
      Value base = m.lookupOrDefault(s.base);
      SmallVector<Value> tokens;
      for (auto &[memref, tile] : s.tiles)
        if (!tile.stored)
          loadTile(memref, shared.lookup(memref), base, tile.width(), tokens);
      if (!tokens.empty()) {
        Value group = nvgpu::DeviceAsyncCreateGroupOp::create(
            b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
        nvgpu::DeviceAsyncWaitOp::create(b, loc, group, /*numGroups=*/IntegerAttr());
      }
      gpu::BarrierOp::create(b, loc);
    };
    auto ownVector = [&](Value memref, int64_t width, int64_t offset) {
      SmallVector<Value> &vectors = ownRow[memref];
      vectors.resize(width / lanes);
      Value &v = vectors[offset / lanes];
      if (!v) {
        v = load(shared.lookup(memref),
                 ValueRange{tileIndex(row, c(offset - offset % lanes), width)});
        reads.push_back(v.getDefiningOp());
      }
      return v;
    };
    auto storeResult = [&](Value memref, int64_t width, int64_t offset, Value v) {
      SmallVector<Value> &values = results[memref];
      values.resize(width);
      values[offset] = v;
      int64_t first = offset - offset % lanes;
      ArrayRef<Value> lanesOf = ArrayRef<Value>(values).slice(first, lanes);
      if (llvm::any_of(lanesOf, [](Value v) { return !v; }))
        return;
      auto type = VectorType::get({lanes}, v.getType());
      vectorStore(b, loc, vector::FromElementsOp::create(b, loc, type, lanesOf),
                  shared.lookup(memref), ValueRange{tileIndex(row, c(first), width)});
    };
    if (!inBody)
      loadTiles();
    for (Operation &op : f.getBody()->without_terminator()) {
      if (auto it = s.offsets.find(&op); it != s.offsets.end()) {
        Value memref = memrefOf(&op);
        int64_t offset = it->second, width = s.tiles.lookup(memref).width();
        Value tile = shared.lookup(memref);
        if (auto load = dyn_cast<memref::LoadOp>(op)) {
          Value read = lanes == 1
                           ? memref::LoadOp::create(b, loc, tile,
                                                    ValueRange{tileIndex(row, c(offset), width)})
                                 .getResult()
                           : vector::ExtractOp::create(b, loc, ownVector(memref, width, offset),
                                                       offset % lanes)
                                 .getResult();
          reads.push_back(read.getDefiningOp());
          m.map(load.getResult(), read);
          continue;
        }
        Value v = m.lookupOrDefault(llvm::cast<memref::StoreOp>(op).getValue());
        if (lanes == 1)
          memref::StoreOp::create(b, loc, v, tile, ValueRange{tileIndex(row, c(offset), width)});
        else
          storeResult(memref, width, offset, v);
      } else {
        guardStores(b, b.clone(op, m), valid);
      }
      if (&op == baseDef)
        loadTiles();
    }
    // A walk loads each block's steps first (global loads in flight
    // together); from the tiles, each read moves to its first use, so that
    // a block of 64 steps does not hold its whole rows in registers (which
    // spilled backward's three inputs).
    for (Operation *read : llvm::reverse(reads))
      sinkToFirstUse(read);
    gpu::BarrierOp::create(b, loc);
    Value base = m.lookupOrDefault(s.base);
    for (auto &[memref, tile] : s.tiles)
      if (tile.stored)
        storeTile(memref, shared.lookup(memref), base, tile.width());
    scf::YieldOp::create(b, loc, mapped(m, f.getBody()->getTerminator()->getOperands()));
    for (auto [from, to] : llvm::zip(f.getResults(), staged.getResults()))
      m.map(from, to);
  }
};

/// The tiles for blocks of `threads` with accesses of `lanes`, in the
/// order of the loops and their tiles.
SmallVector<SharedArray> tileArrays(ArrayRef<StagedLoop> loops, int64_t threads, int64_t lanes) {
  SmallVector<SharedArray> arrays;
  for (const StagedLoop &s : loops)
    for (auto &[memref, tile] : s.tiles)
      arrays.push_back({llvm::cast<MemRefType>(memref.getType()).getElementType(),
                        threads * (tile.width() + lanes)});
  return arrays;
}

/// Elements per 16-byte vector that every tile allows (whole vectors per
/// tile, bases at vector multiples), or 1.
int64_t commonLanes(ArrayRef<StagedLoop> loops) {
  int64_t lanes = kMaxVectorLanes;
  for (const StagedLoop &s : loops)
    for (auto &[memref, tile] : s.tiles)
      lanes = std::min(lanes, vectorLanesOf(llvm::cast<MemRefType>(memref.getType())));
  for (const StagedLoop &s : loops) {
    if (!isMultipleOf(s.base, lanes))
      return 1;
    for (auto &[memref, tile] : s.tiles)
      if (tile.width() % lanes != 0)
        return 1;
  }
  return lanes;
}

/// The loops of `loop`'s body that walk their rows in staged blocks.
SmallVector<StagedLoop> stagedLoopsOf(scf::ParallelOp loop, Uniformity &uniform) {
  SmallVector<StagedLoop> stagedLoops;
  if (loop.getNumResults() != 0)
    return stagedLoops;
  for (auto f : loop.getBody()->getOps<scf::ForOp>())
    if (std::optional<StagedLoop> s = matchStagedLoop(f, loop, uniform))
      stagedLoops.push_back(std::move(*s));
  return stagedLoops;
}

/// The most threads (a power of two, at least a warp, at most
/// `blockSize`) whose tiles fit the shared memory every GPU gives a block
/// without opting in; nothing when a warp's do not.
std::optional<int64_t> stagingThreads(ArrayRef<StagedLoop> stagedLoops, int64_t blockSize) {
  int64_t vectorLanes = commonLanes(stagedLoops);
  int64_t threads = int64_t(1) << llvm::Log2_64(std::max<int64_t>(blockSize, kWarpSize));
  auto tilesFit = [&](int64_t threads) {
    return sharedArraysBytes(tileArrays(stagedLoops, threads, vectorLanes)) <=
           kSharedBytesWithoutOptIn;
  };
  while (threads > kWarpSize && !tilesFit(threads))
    threads /= 2;
  if (!tilesFit(threads))
    return std::nullopt;
  return threads;
}

} // namespace

std::optional<int64_t> transposedStagingThreads(scf::ParallelOp loop, int64_t blockSize) {
  Uniformity uniform(loop);
  SmallVector<StagedLoop> stagedLoops = stagedLoopsOf(loop, uniform);
  if (stagedLoops.empty())
    return std::nullopt;
  return stagingThreads(stagedLoops, blockSize);
}

bool mapTransposedStaging(scf::ParallelOp loop, int64_t blockSize) {
  Uniformity uniform(loop);
  SmallVector<StagedLoop> stagedLoops = stagedLoopsOf(loop, uniform);
  if (stagedLoops.empty())
    return false;
  int64_t vectorLanes = commonLanes(stagedLoops);
  std::optional<int64_t> fitting = stagingThreads(stagedLoops, blockSize);
  if (!fitting)
    return false;
  int64_t threads = *fitting;
  Block *body = loop.getBody();

  Location loc = loop.getLoc();
  OpBuilder b(loop);
  SmallVector<Value> counts;
  Value total;
  std::tie(counts, total) = tripCounts(b, loop);
  Value block = indexConstant(b, loc, threads);
  Value groups = arith::CeilDivUIOp::create(b, loc, total, block);

  auto build = [&](OpBuilder &hb, int64_t lanes) {
    SmallVector<SharedArray> arrays = tileArrays(stagedLoops, threads, lanes);
    Value sharedBytes =
        arith::ConstantIntOp::create(hb, loc, hb.getI32Type(), sharedArraysBytes(arrays));
    buildLaunchOver(hb, loc, total, block, block, [&](OpBuilder &ib, gpu::LaunchOp launch) {
      // The tiles, one after another in the block's dynamic shared memory.
      SmallVector<Value> views = sharedArrays(ib, loc, arrays);
      SmallVector<llvm::DenseMap<Value, Value>> shared(stagedLoops.size());
      Value *view = views.begin();
      for (auto [s, tiles] : llvm::zip(stagedLoops, shared))
        for (auto &entry : s.tiles)
          tiles[entry.first] = *view++;
      // Groups of `threads` iterations, a block each; a block's threads
      // take the same groups, so they meet at the same barriers.
      auto groupLoop = scf::ForOp::create(ib, loc, launch.getBlockIds().x, groups,
                                          launch.getGridSize().x);
      OpBuilder gb = OpBuilder::atBlockBegin(groupLoop.getBody());
      Value tid = launch.getThreadIds().x;
      Value first = arith::MulIOp::create(gb, loc, groupLoop.getInductionVar(), block);
      Builder builder{gb, loc, loop, counts, total, threads, lanes, tid, first, Value()};
      auto [indices, exists] = builder.rowIndices(tid);
      builder.valid = exists;
      IRMapping m;
      m.map(loop.getInductionVars(), indices);
      unsigned next = 0;
      for (Operation &op : body->without_terminator()) {
        if (next < stagedLoops.size() && stagedLoops[next].loop == &op) {
          builder.emitStaged(stagedLoops[next], shared[next], m);
          ++next;
          continue;
        }
        guardStores(gb, gb.clone(op, m), exists);
      }
    }, sharedBytes);
  };

  // Vectors when the buffers allow them at run time (unit innermost
  // stride, rows and bases aligned to the vector), else scalars.
  Value fits;
  if (vectorLanes > 1) {
    SmallVector<Value> buffers;
    for (const StagedLoop &s : stagedLoops)
      for (auto &[memref, tile] : s.tiles)
        buffers.push_back(memref);
    fits = vectorAccessesFit(b, loc, buffers, vectorLanes, indexConstant(b, loc, vectorLanes),
                             indexConstant(b, loc, 0));
  }
  buildVectorsIfFit(b, loc, fits, vectorLanes, build);
  loop.erase();
  return true;
}

} // namespace nerve::loop_mapping
