//===- RowReductions.cpp - a row's reductions over a warp or a block ------===//
//
// A parallel loop over rows whose body reduces each row with sequential
// loops (a row sum, a softmax's maximum and sum, a layer norm's statistics)
// runs a row per warp, or per block when rows are long: the threads split
// each reduction in a fixed order (by 16-byte vectors where a host check
// allows), combine by shuffles and shared memory, and run what the body
// computes between the reductions together; one thread writes.
//
//===----------------------------------------------------------------------===//

#include "LoopMapping.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace nerve::loop_mapping {

namespace {

/// The value iteration `iv` of `r` folds in, built from a copy of its body.
Value laneValue(OpBuilder &b, const LaneReduction &r, IRMapping outer, Value iv) {
  IRMapping m = std::move(outer);
  m.map(r.loop.getInductionVar(), iv);
  for (Operation &op : r.loop.getBody()->without_terminator())
    if (&op != r.combine)
      b.clone(op, m);
  return m.lookupOrDefault(r.combine->getOperand(1 - r.accOperand));
}

/// Vectors a lane of a warp loads at once (one partial each): four of
/// f32, eight of 16-bit elements. H200, f16 row sum over 4096 x 65536:
/// 2 vectors 84.3% of the copy bandwidth, 4 82.2%, 8 86.1% (16384 x 4096
/// and 65536 x 1024 within 0.5 points); f32 with 8 no faster than 4.
int64_t vectorsInFlight(int64_t vectorLanes) { return vectorLanes > 4 ? 8 : 4; }

/// The vector lanes `r`'s loads along its index allow (16 bytes of the
/// narrowest element type, at most 8), adding the buffers to `buffers`;
/// 1 when it runs from other than 0 by 1 or loads none that way.
int64_t reductionLanes(const LaneReduction &r, llvm::SetVector<Value> &buffers) {
  if (getConstantIntValue(r.loop.getLowerBound()) != 0 ||
      getConstantIntValue(r.loop.getStep()) != 1)
    return 1;
  int64_t lanes = 1;
  for (auto load : r.loop.getBody()->getOps<memref::LoadOp>()) {
    if (load.getIndices().empty() || load.getIndices().back() != r.loop.getInductionVar())
      continue;
    int64_t loadLanes = vectorLanesOf(load.getMemRefType());
    if (!loadLanes)
      return 1;
    buffers.insert(load.getMemRef());
    lanes = std::max(lanes, std::min(loadLanes, kMaxVectorLanes));
  }
  return lanes;
}

/// Thread `lane` of `lanes` splitting `r`: its partial value. Lane l
/// takes iterations l, l + lanes, ...; with `vectorLanes` > 1 (r runs
/// from 0 by 1 over a whole number of vectors: mapRowReductions checks),
/// vectors l, l + lanes, ... of that many iterations, its loads along r
/// one vector load each, the vector's values combined in order.
Value lanePartial(OpBuilder &b, Location loc, const LaneReduction &r, IRMapping &mapping,
                  Value lane, Value lanes, int64_t vectorLanes) {
  if (vectorLanes > 1) {
    Value iv = r.loop.getInductionVar();
    return vectorPartial(
        b, loc, r, mapping, Value(), mapping.lookupOrDefault(r.loop.getUpperBound()), lane, lanes,
        vectorLanes, vectorsInFlight(vectorLanes),
        [&](OpBuilder &vb, MutableArrayRef<IRMapping> maps) {
          for (Operation &op : r.loop.getBody()->without_terminator()) {
            if (&op == r.combine)
              continue;
            auto load = dyn_cast<memref::LoadOp>(op);
            if (load && !load.getIndices().empty() && load.getIndices().back() == iv) {
              IRMapping &first = maps.front();
              Value vec = vectorLoad(vb, loc, first.lookupOrDefault(load.getMemRef()),
                                     mapped(first, load.getIndices()), vectorLanes);
              unpackLanes(vb, loc, vec, load.getResult(), maps);
              continue;
            }
            for (IRMapping &m : maps)
              vb.clone(op, m);
          }
        });
  }
  return stridedPartial(b, loc, r, mapping.lookupOrDefault(r.loop.getLowerBound()),
                        mapping.lookupOrDefault(r.loop.getUpperBound()),
                        mapping.lookupOrDefault(r.loop.getStep()), lane, lanes,
                        [&](OpBuilder &vb, Value iv) { return laneValue(vb, r, mapping, iv); });
}

/// The iterations a thread of a row's block takes at least before the
/// row runs on a block instead of a warp: a whole round of its loads in
/// flight (lanePartial's unrolled chunk).
int64_t blockRowIterations(int64_t threads, int64_t vectorLanes) {
  return threads * (vectorLanes > 1 ? vectorLanes * vectorsInFlight(vectorLanes) : 4);
}

} // namespace

namespace {

/// Builds the launches of one loop of row reductions (mapRowReductions).
class RowReductionBuilder {
public:
  RowReductionBuilder(scf::ParallelOp loop, llvm::DenseMap<Operation *, LaneReduction> reductions,
                      int64_t blockSize, int64_t minColumns)
      : loop(loop), reductions(std::move(reductions)), body(loop.getBody()), loc(loop.getLoc()),
        threads(std::max<int64_t>(kWarpSize, blockSize / kWarpSize * kWarpSize)),
        minColumns(minColumns) {}

  void build() {
    OpBuilder b(loop);
    std::tie(counts, rows) = tripCounts(b, loop);
    // Each reduction's trip count on the host, when it is known there.
    for (Operation &op : body->without_terminator())
      if (auto it = reductions.find(&op); it != reductions.end())
        trips.push_back(hostTripCount(b, it->second.loop, loop));
    tripsKnown = llvm::all_of(trips, [](Value t) { return bool(t); });
    staticTrip = shortestStaticTrip();
    Value fits;
    int64_t vectorLanes = chooseVectorLanes(b, fits);
    buildVectorsIfFit(b, loc, fits, vectorLanes,
                      [&](OpBuilder &hb, int64_t lanes) { buildForLanes(hb, lanes); });
    loop.erase();
  }

private:
  scf::ParallelOp loop;
  llvm::DenseMap<Operation *, LaneReduction> reductions;
  Block *body;
  Location loc;
  int64_t threads;    ///< a block's threads
  int64_t minColumns; ///< what the caller knows the rows' length to be at least
  SmallVector<Value> counts;
  Value rows;
  SmallVector<Value> trips; ///< each reduction's trip count on the host, or null
  bool tripsKnown = false;
  std::optional<int64_t> staticTrip;

  /// What a launch's row loop shares with each reduction of a row.
  struct RowContext {
    bool rowBlocks = false;
    int64_t vectorLanes = 1;
    gpu::LaunchOp launch;
    Value tid, lane, warp, warpSize, block, isLaneZero;
    IRMapping mapping;
    DenseMap<Type, Value> scratchOf;
  };

  /// The shortest reduction's trip count when all are known statically.
  std::optional<int64_t> shortestStaticTrip() const {
    std::optional<int64_t> shortest;
    for (auto &entry : reductions) {
      FoldLoop inner = entry.second.loop;
      auto lb = getConstantIntValue(inner.getLowerBound());
      auto ub = getConstantIntValue(inner.getUpperBound());
      auto step = getConstantIntValue(inner.getStep());
      if (!lb || !ub || !step || *step <= 0)
        return std::nullopt;
      int64_t trip = std::max<int64_t>(0, (*ub - *lb + *step - 1) / *step);
      shortest = shortest ? std::min(*shortest, trip) : trip;
    }
    return shortest;
  }

  /// Vectors when every reduction allows the same lanes and its trip count
  /// is known on the host; `fits` becomes the host check of the buffers.
  int64_t chooseVectorLanes(OpBuilder &b, Value &fits) {
    int64_t vectorLanes = 0;
    unsigned index = 0;
    for (Operation &op : body->without_terminator()) {
      auto it = reductions.find(&op);
      if (it == reductions.end())
        continue;
      const LaneReduction &r = it->second;
      llvm::SetVector<Value> buffers;
      int64_t lanes = reductionLanes(r, buffers);
      Value trip = lanes > 1 ? trips[index] : Value();
      ++index;
      if (!trip || (vectorLanes && lanes != vectorLanes))
        return 1;
      vectorLanes = lanes;
      Value ok =
          vectorAccessesFit(b, loc, buffers.getArrayRef(), lanes, trip, indexConstant(b, loc, 0));
      fits = fits ? b.createOrFold<arith::AndIOp>(loc, fits, ok) : ok;
    }
    return vectorLanes;
  }

  /// A block per row where every reduction is long enough, else a warp per
  /// row; chosen here when the lengths are known, on the host otherwise.
  void buildForLanes(OpBuilder &hb, int64_t vectorLanes) {
    int64_t least = blockRowIterations(threads, vectorLanes);
    if (minColumns >= least)
      return buildLaunch(hb, vectorLanes, /*rowBlocks=*/true);
    if (staticTrip)
      return buildLaunch(hb, vectorLanes, /*rowBlocks=*/*staticTrip >= least);
    if (!tripsKnown)
      return buildLaunch(hb, vectorLanes, /*rowBlocks=*/false);
    Value leastValue = indexConstant(hb, loc, least);
    Value longRows;
    for (Value trip : trips) {
      Value isLong =
          hb.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::uge, trip, leastValue);
      longRows = longRows ? hb.createOrFold<arith::AndIOp>(loc, longRows, isLong) : isLong;
    }
    auto choice = scf::IfOp::create(hb, loc, longRows, /*withElseRegion=*/true);
    OpBuilder tb = OpBuilder::atBlockBegin(&choice.getThenRegion().front());
    buildLaunch(tb, vectorLanes, /*rowBlocks=*/true);
    OpBuilder eb = OpBuilder::atBlockBegin(&choice.getElseRegion().front());
    buildLaunch(eb, vectorLanes, /*rowBlocks=*/false);
  }

  /// `rowBlocks`: a block per row (all its threads split each reduction),
  /// else a warp per row.
  void buildLaunch(OpBuilder &hb, int64_t vectorLanes, bool rowBlocks) {
    int64_t rowsPerBlock = rowBlocks ? 1 : threads / kWarpSize;
    Value block = indexConstant(hb, loc, threads);
    Value perBlock = indexConstant(hb, loc, rowsPerBlock);
    buildLaunchOver(hb, loc, rows, perBlock, block, [&](OpBuilder &ib, gpu::LaunchOp launch) {
      RowContext c;
      c.rowBlocks = rowBlocks;
      c.vectorLanes = vectorLanes;
      c.launch = launch;
      c.block = block;
      c.tid = launch.getThreadIds().x;
      c.warpSize = indexConstant(ib, loc, kWarpSize);
      c.lane = arith::RemUIOp::create(ib, loc, c.tid, c.warpSize);
      c.warp = arith::DivUIOp::create(ib, loc, c.tid, c.warpSize);
      Value zero = indexConstant(ib, loc, 0);
      c.isLaneZero = arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::eq, c.lane, zero);
      Value first = arith::MulIOp::create(ib, loc, launch.getBlockIds().x, perBlock);
      Value stride = arith::MulIOp::create(ib, loc, launch.getGridSize().x, perBlock);
      Value isLeader = c.isLaneZero;
      if (rowBlocks) {
        Value tidZero = indexConstant(ib, loc, 0);
        isLeader = arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::eq, c.tid, tidZero);
      } else {
        first = arith::AddIOp::create(ib, loc, first, c.warp);
      }
      // Every lane of a warp (of a block, for rowBlocks: the barriers
      // see all threads) walks the same rows.
      auto rowLoop = scf::ForOp::create(ib, loc, first, rows, stride);
      OpBuilder rb = OpBuilder::atBlockBegin(rowLoop.getBody());
      c.mapping.map(loop.getInductionVars(),
                    delinearize(rb, loc, loop, counts, rowLoop.getInductionVar()));
      buildRow(rb, c, isLeader);
    });
  }

  /// A row's body: its reductions split over the lanes, its other loads
  /// and arithmetic by every lane, its writes once, by the leader.
  void buildRow(OpBuilder &rb, RowContext &c, Value isLeader) {
    for (Operation &op : body->without_terminator()) {
      if (auto it = reductions.find(&op); it != reductions.end()) {
        c.mapping.map(op.getResult(0), reduce(rb, c, it->second));
      } else if (isa<memref::LoadOp>(op) || isMemoryEffectFree(&op)) {
        rb.clone(op, c.mapping);
      } else {
        auto once = scf::IfOp::create(rb, loc, isLeader, /*withElseRegion=*/false);
        OpBuilder ob = OpBuilder::atBlockBegin(&once.getThenRegion().front());
        ob.clone(op, c.mapping);
      }
    }
  }

  /// One reduction of the row: lane partials, a warp's butterfly, the
  /// block's warps combined in order (rowBlocks), then the fold's init.
  Value reduce(OpBuilder &rb, RowContext &c, const LaneReduction &r) {
    Value partial = lanePartial(rb, loc, r, c.mapping, c.rowBlocks ? c.tid : c.lane,
                                c.rowBlocks ? c.block : c.warpSize, c.vectorLanes);
    partial = warpButterfly(rb, loc, r, partial);
    if (c.rowBlocks) {
      Value &scratch = c.scratchOf[partial.getType()];
      if (!scratch)
        scratch = workgroupArray(c.launch, partial.getType(), threads / kWarpSize, loc);
      Value warps = indexConstant(rb, loc, threads / kWarpSize);
      partial = blockCombine(rb, loc, r, partial, scratch, c.warp, c.isLaneZero, warps);
    }
    return combineAs(rb, r, c.mapping.lookupOrDefault(r.loop.getInitArgs()[0]), partial);
  }
};

} // namespace

/// The folds of `loop`'s body that reduce its rows, by op; nothing when the
/// body is anything else (mapRowReductions's shape) or they are statically
/// short.
static std::optional<llvm::DenseMap<Operation *, LaneReduction>>
matchRowReductions(scf::ParallelOp loop) {
  llvm::DenseMap<Operation *, LaneReduction> reductions;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (auto inner = dyn_cast<scf::ForOp>(op)) {
      std::optional<LaneReduction> r = matchLaneReduction(inner);
      if (!r)
        return std::nullopt;
      auto lb = getConstantIntValue(inner.getLowerBound());
      auto ub = getConstantIntValue(inner.getUpperBound());
      if (lb && ub && (*ub - *lb) / *getConstantIntValue(inner.getStep()) < kMinStaticTrip)
        return std::nullopt;
      reductions[&op] = *r;
      continue;
    }
    if (op.getNumRegions() != 0)
      return std::nullopt;
    // Writes happen once, on lane 0: they may not produce values.
    if (!isa<memref::LoadOp>(op) && !isMemoryEffectFree(&op) && op.getNumResults() != 0)
      return std::nullopt;
  }
  if (reductions.empty())
    return std::nullopt;
  return reductions;
}

bool reducesRows(scf::ParallelOp loop) { return matchRowReductions(loop).has_value(); }

/// A parallel loop over rows whose body reduces each row with a
/// sequential loop (a row sum, the max and the sum of a softmax, the
/// statistics of a layer norm) runs one row per warp: lanes split each
/// reduction (lanePartial), combine by shuffles, compute what the body
/// computes between them together, and lane 0 alone writes. Rows long
/// enough that each thread of a block has a whole round of loads
/// (blockRowIterations) run one per block instead, the warps' totals
/// combined in order through shared memory: a row per warp leaves a
/// 4096 x 65536 f32 sum with half the warps the SMs hold, each with 2 KiB
/// of loads in flight (H200: 97.4% of the copy bandwidth against 104.1%
/// a row per block; f16 87.9 against 98.1). The host picks by the rows' length.
/// Returns false, changing nothing, when the body is anything else, or
/// its reductions are statically short (then a thread per row is
/// better). When the reductions' loads along the row allow 16-byte
/// vectors, a host check at run time (whole number of vectors per row,
/// aligned buffers) picks a launch whose lanes load by vectors or the
/// scalar one. `minColumns`: what the caller knows the rows' length to be
/// at least (a row program's rows too wide for it); rows known to be long
/// get only the launch with a block per row, and so do rows of a static
/// length the launch of their length.
bool mapRowReductions(scf::ParallelOp loop, int64_t blockSize, int64_t minColumns) {
  std::optional<llvm::DenseMap<Operation *, LaneReduction>> matched = matchRowReductions(loop);
  if (!matched)
    return false;
  RowReductionBuilder(loop, std::move(*matched), blockSize, minColumns).build();
  return true;
}

} // namespace nerve::loop_mapping
