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
// A tile spans 128 bytes of the widest element along both dimensions (32
// f32, 64 f16), so that every global access of a warp covers whole 32-byte
// sectors. Tile rows are padded by 4 bytes: the transposed reads of a warp
// hit 32 distinct banks. A tile wholly inside the loop's bounds runs
// unguarded; in one at the edge, loads past the bounds are clamped to the
// last iteration and stores are skipped (with 64-bit indices, the clamps
// and guards cost as much issue time as the arithmetic of a softmax).
//
//===----------------------------------------------------------------------===//

#include "LoopMapping.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace nerve::loop_mapping {
namespace {

constexpr int64_t kTileThreads = 256;
constexpr int64_t kTileLineBytes = 128;

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
  int p = -1;
  for (auto load : body->getOps<memref::LoadOp>()) {
    std::optional<unsigned> dim = contiguousDim(load.getMemRefType());
    int along = dim ? dimensionOf(loop, load.getIndices()[*dim]) : -1;
    if (along < 0 || along == q || (p >= 0 && along != p) || stored.contains(load.getMemRef()))
      continue;
    auto ivOrOutside = [&](Value v) {
      return dimensionOf(loop, v) >= 0 || !loop->isAncestor(v.getParentBlock()->getParentOp());
    };
    if (!llvm::all_of(load.getIndices(), ivOrOutside) ||
        !llvm::is_contained(load.getIndices(), loop.getInductionVars()[q]))
      continue; // a row read by every thread of the tile alike stays direct
    p = along;
    plan.staged.push_back(load);
  }
  if (plan.staged.empty())
    return std::nullopt;
  plan.p = p;
  return plan;
}

} // namespace

FailureOr<scf::ParallelOp> mapTiledTranspose(scf::ParallelOp loop) {
  std::optional<TransposePlan> plan = matchTiledTranspose(loop);
  if (!plan)
    return failure();
  Block *body = loop.getBody();
  unsigned rank = loop.getNumLoops(), p = plan->p, q = plan->q;
  int64_t widest = 1;
  for (Operation *load : plan->staged)
    widest = std::max(widest, elementBytes(llvm::cast<memref::LoadOp>(load).getMemRef()));
  for (auto store : body->getOps<memref::StoreOp>())
    widest = std::max(widest, elementBytes(store.getMemRef()));
  const int64_t side = std::clamp<int64_t>(kTileLineBytes / widest, 16, 64);
  const int64_t rowsPerPass = kTileThreads / side;
  const int64_t perThread = side * side / kTileThreads;

  Location loc = loop.getLoc();
  OpBuilder b(loop);
  SmallVector<Value> counts = tripCounts(b, loop).first;
  // Fewer than half a tile along p would leave most of every tile idle:
  // such loops keep the usual mapping (a copy of the loop, for the caller).
  Value tall = b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::uge, counts[p],
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
  Value sideV = indexConstant(b, loc, side);
  Value tilesP = arith::CeilDivUIOp::create(b, loc, counts[p], sideV);
  Value tilesQ = arith::CeilDivUIOp::create(b, loc, counts[q], sideV);
  Value work = arith::MulIOp::create(b, loc, tilesP, tilesQ);
  SmallVector<unsigned> others;
  for (unsigned d = 0; d < rank; ++d)
    if (d != p && d != q) {
      others.push_back(d);
      work = arith::MulIOp::create(b, loc, work, counts[d]);
    }

  // One tile of shared memory per staged load, rows padded by 4 bytes.
  SmallVector<int64_t> pitch;
  SmallVector<SharedArray> arrays;
  for (Operation *load : plan->staged) {
    int64_t bytes = elementBytes(llvm::cast<memref::LoadOp>(load).getMemRef());
    pitch.push_back(side + std::max<int64_t>(1, 4 / bytes));
    arrays.push_back({load->getResult(0).getType(), side * pitch.back()});
  }
  Value sharedSize =
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), sharedArraysBytes(arrays));

  buildLaunchOver(b, loc, work, indexConstant(b, loc, 1), indexConstant(b, loc, kTileThreads),
                  [&](OpBuilder &ib, gpu::LaunchOp launch) {
    auto c = [&](int64_t v) { return indexConstant(ib, loc, v); };
    SmallVector<Value> tiles = sharedArrays(ib, loc, arrays);
    Value tid = launch.getThreadIds().x;
    Value tidMod = arith::RemUIOp::create(ib, loc, tid, c(side));
    Value tidDiv = arith::DivUIOp::create(ib, loc, tid, c(side));
    SmallVector<Value> last(rank);
    for (unsigned d : {p, q})
      last[d] = arith::SubIOp::create(ib, loc, counts[d], c(1));

    auto items = scf::ForOp::create(ib, loc, launch.getBlockIds().x, work,
                                    launch.getGridSize().x);
    OpBuilder lb = OpBuilder::atBlockBegin(items.getBody());
    auto lc = [&](int64_t v) { return indexConstant(lb, loc, v); };
    Value rest = items.getInductionVar();
    Value tq = arith::RemUIOp::create(lb, loc, rest, tilesQ);
    rest = arith::DivUIOp::create(lb, loc, rest, tilesQ);
    Value tp = arith::RemUIOp::create(lb, loc, rest, tilesP);
    rest = arith::DivUIOp::create(lb, loc, rest, tilesP);
    SmallVector<Value> ivs(rank);
    auto ivAt = [&](OpBuilder &at, unsigned d, Value k) -> Value {
      return arith::AddIOp::create(at, loc, loop.getLowerBound()[d],
                                   arith::MulIOp::create(at, loc, k, loop.getStep()[d]));
    };
    for (int i = static_cast<int>(others.size()) - 1; i >= 0; --i) {
      unsigned d = others[i];
      Value k = i == 0 ? rest : arith::RemUIOp::create(lb, loc, rest, counts[d]).getResult();
      if (i > 0)
        rest = arith::DivUIOp::create(lb, loc, rest, counts[d]);
      ivs[d] = ivAt(lb, d, k);
    }
    Value p0 = arith::MulIOp::create(lb, loc, tp, lc(side));
    Value q0 = arith::MulIOp::create(lb, loc, tq, lc(side));

    // One tile; `partial` when it may reach past the loop's bounds.
    auto emitTile = [&](OpBuilder &tb, bool partial) {
      auto tc = [&](int64_t v) { return indexConstant(tb, loc, v); };
      SmallVector<Value> at = ivs;
      // Position `local` of the tile along dimension d and whether it
      // exists; in a partial tile, clamped to the last iteration.
      auto along = [&](unsigned d, Value origin, Value local) -> std::pair<Value, Value> {
        Value k = arith::AddIOp::create(tb, loc, origin, local);
        if (!partial)
          return {ivAt(tb, d, k), Value()};
        Value exists = arith::CmpIOp::create(tb, loc, arith::CmpIPredicate::ult, k, counts[d]);
        return {ivAt(tb, d, arith::SelectOp::create(tb, loc, exists, k, last[d])), exists};
      };
      // A thread's own column of the tile along p (loads) and along q (compute).
      Value pOfThread = along(p, p0, tidMod).first;
      auto [qOfThread, qExists] = along(q, q0, tidMod);

      // Staged loads, threads consecutive along p: all loads first, so that
      // they are in flight together, then the shared stores.
      SmallVector<std::pair<Value, Value>> loaded; // (value, tile position), by tile
      SmallVector<unsigned> tileOf;
      for (int64_t k = 0; k < perThread; ++k) {
        Value qLocal = arith::AddIOp::create(tb, loc, tidDiv, tc(k * rowsPerPass));
        at[p] = pOfThread;
        at[q] = along(q, q0, qLocal).first;
        IRMapping m;
        m.map(loop.getInductionVars(), at);
        for (auto [i, load] : llvm::enumerate(plan->staged)) {
          Value pos = arith::AddIOp::create(
              tb, loc, arith::MulIOp::create(tb, loc, qLocal, tc(pitch[i])), tidMod);
          loaded.push_back({tb.clone(*load, m)->getResult(0), pos});
          tileOf.push_back(i);
        }
      }
      for (auto [entry, i] : llvm::zip(loaded, tileOf))
        memref::StoreOp::create(tb, loc, entry.first, tiles[i], ValueRange{entry.second});
      gpu::BarrierOp::create(tb, loc);

      // The body, threads consecutive along q, its iterations interleaved op
      // by op (their loads in flight together); in a partial tile, stores
      // only where they exist.
      SmallVector<IRMapping> mappings(perThread);
      SmallVector<Value> valid(perThread), tileAt(perThread * plan->staged.size());
      for (int64_t k = 0; k < perThread; ++k) {
        Value pLocal = arith::AddIOp::create(tb, loc, tidDiv, tc(k * rowsPerPass));
        auto [pIv, pExists] = along(p, p0, pLocal);
        at[p] = pIv;
        at[q] = qOfThread;
        if (partial)
          valid[k] = arith::AndIOp::create(tb, loc, pExists, qExists);
        mappings[k].map(loop.getInductionVars(), at);
        for (unsigned i = 0; i < plan->staged.size(); ++i)
          tileAt[k * plan->staged.size() + i] = arith::AddIOp::create(
              tb, loc, arith::MulIOp::create(tb, loc, tidMod, tc(pitch[i])), pLocal);
      }
      for (Operation &op : body->without_terminator()) {
        auto stagedAt = llvm::find(plan->staged, &op);
        for (int64_t k = 0; k < perThread; ++k) {
          if (stagedAt != plan->staged.end()) {
            unsigned i = stagedAt - plan->staged.begin();
            Value v = memref::LoadOp::create(tb, loc, tiles[i],
                                             ValueRange{tileAt[k * plan->staged.size() + i]});
            mappings[k].map(op.getResult(0), v);
          } else if (isa<memref::StoreOp>(op) && valid[k]) {
            auto inRange = scf::IfOp::create(tb, loc, valid[k], /*withElseRegion=*/false);
            OpBuilder sb = OpBuilder::atBlockBegin(&inRange.getThenRegion().front());
            sb.clone(op, mappings[k]);
          } else {
            tb.clone(op, mappings[k]);
          }
        }
      }
      // The next tile's loads overwrite the shared tiles.
      gpu::BarrierOp::create(tb, loc);
    };
    // Tiles wholly inside the bounds (all but the last along p and q) need
    // no clamps and no guards: fewer instructions per element, which the
    // 64-bit index arithmetic makes count.
    auto fits = [&](unsigned d, Value origin) {
      return arith::CmpIOp::create(lb, loc, arith::CmpIPredicate::ule,
                                   arith::AddIOp::create(lb, loc, origin, lc(side)), counts[d]);
    };
    Value whole = arith::AndIOp::create(lb, loc, fits(p, p0), fits(q, q0));
    auto choice = scf::IfOp::create(lb, loc, whole, /*withElseRegion=*/true);
    OpBuilder wholeBuilder = OpBuilder::atBlockBegin(&choice.getThenRegion().front());
    emitTile(wholeBuilder, /*partial=*/false);
    OpBuilder partialBuilder = OpBuilder::atBlockBegin(&choice.getElseRegion().front());
    emitTile(partialBuilder, /*partial=*/true);
  }, sharedSize);
  loop.erase();
  return fallback;
}

} // namespace nerve::loop_mapping
