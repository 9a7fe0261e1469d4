//===- ParallelLoopsToGPU.cpp - parallel loops onto GPU threads ---------===//

#include "nerve/Conversion/Passes.h"

#include "LoopMapping.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"


namespace nerve {
#define GEN_PASS_DEF_PARALLELLOOPSTOGPU
#include "nerve/Conversion/Passes.h.inc"
} // namespace nerve

using namespace mlir;
using namespace nerve::loop_mapping;

// (NVGPUDialect.h declares a global kWarpSize of its own.)
constexpr int64_t kThreadsPerWarp = nerve::loop_mapping::kWarpSize;

/// Ops that may stay in host code: they compute on values, not memory
/// (sizes from descriptors, views, index arithmetic), or manage buffers.
static bool staysOnHost(Operation *op) {
  if (isa<memref::AllocOp, memref::DeallocOp, func::ReturnOp>(op))
    return true;
  return isMemoryEffectFree(op);
}

/// loads, stores and pure ops, nothing with regions.
static bool isStraightLine(Block *body) {
  return llvm::all_of(body->without_terminator(), [](Operation &op) {
    return op.getNumRegions() == 0 &&
           (isa<memref::LoadOp, memref::StoreOp>(op) || isMemoryEffectFree(&op));
  });
}

/// Merges `outer` with the parallel loops nested directly in it into one
/// loop over all their dimensions (a neuron over [b, h, w, c] is written as
/// four nested loops), so that all of them map onto threads. Pure ops
/// between the loops that do not use the outer indices (bounds) move out.
static scf::ParallelOp collapseNested(scf::ParallelOp outer) {
  while (outer.getNumResults() == 0) {
    Block *body = outer.getBody();
    scf::ParallelOp inner;
    SmallVector<Operation *> prefix;
    for (Operation &op : body->without_terminator()) {
      auto nested = dyn_cast<scf::ParallelOp>(op);
      if (nested && !inner) {
        inner = nested;
        continue;
      }
      if (inner || op.getNumRegions() != 0 || !isMemoryEffectFree(&op))
        return outer;
      for (Value v : op.getOperands())
        if (llvm::is_contained(outer.getInductionVars(), v))
          return outer;
      prefix.push_back(&op);
    }
    if (!inner || inner.getNumResults() != 0)
      return outer;
    auto outside = [&](Value v) { return !outer->isAncestor(v.getParentBlock()->getParentOp()) ||
                                         llvm::any_of(prefix, [&](Operation *op) {
                                           return v.getDefiningOp() == op;
                                         }); };
    for (ValueRange bounds : {inner.getLowerBound(), inner.getUpperBound(), inner.getStep()})
      if (!llvm::all_of(bounds, outside))
        return outer;
    for (Operation *op : prefix)
      op->moveBefore(outer);
    OpBuilder b(outer);
    auto concat = [](ValueRange a, ValueRange c) {
      SmallVector<Value> all(a);
      all.append(c.begin(), c.end());
      return all;
    };
    auto merged = scf::ParallelOp::create(
        b, outer.getLoc(), concat(outer.getLowerBound(), inner.getLowerBound()),
        concat(outer.getUpperBound(), inner.getUpperBound()),
        concat(outer.getStep(), inner.getStep()));
    Block *mergedBody = merged.getBody();
    unsigned outerRank = outer.getNumLoops();
    for (auto [i, iv] : llvm::enumerate(outer.getInductionVars()))
      iv.replaceAllUsesWith(mergedBody->getArgument(i));
    for (auto [i, iv] : llvm::enumerate(inner.getInductionVars()))
      iv.replaceAllUsesWith(mergedBody->getArgument(outerRank + i));
    Block *innerBody = inner.getBody();
    mergedBody->getOperations().splice(mergedBody->getTerminator()->getIterator(),
                                       innerBody->getOperations(), innerBody->begin(),
                                       std::prev(innerBody->end()));
    outer.erase();
    outer = merged;
  }
  return outer;
}



namespace {

struct ParallelLoopsToGPUPass
    : nerve::impl::ParallelLoopsToGPUBase<ParallelLoopsToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Folds' combine functions serve this pass alone (SplitReductions.cpp):
    // they and the loops' references go once the loops are mapped, before
    // kernels move into GPU modules where the references would dangle.
    llvm::SetVector<Operation *> combines;
    module.walk([&](scf::ForOp fold) {
      if (auto name = fold->getAttrOfType<FlatSymbolRefAttr>(nerve::kCombineAttrName))
        if (Operation *fn = SymbolTable::lookupSymbolIn(module, name))
          combines.insert(fn);
    });
    for (auto func : module.getOps<func::FuncOp>()) {
      if (!func->hasAttr("nerve.kernel") || func.isExternal())
        continue;
      if (failed(mapFunction(func)))
        return signalPassFailure();
    }
    module.walk([](scf::ForOp fold) {
      fold->removeAttr(nerve::kCombineAttrName);
      fold->removeAttr(nerve::kMaxSumExpAttrName);
    });
    for (Operation *fn : combines)
      fn->erase();
  }

  LogicalResult mapFunction(func::FuncOp func) {
    Block &body = func.front();
    SmallVector<Operation *> pending;
    auto flush = [&]() -> LogicalResult {
      if (pending.empty())
        return success();
      LogicalResult r = wrapSequential(pending);
      pending.clear();
      return r;
    };
    for (Operation *next = &body.front(); next;) {
      Operation &op = *next;
      next = op.getNextNode();
      // Host code may not use what device code computes: an op reading a
      // value of the pending device ops runs on the device with them.
      bool usesDeviceValue = llvm::any_of(op.getOperands(), [&](Value v) {
        return llvm::is_contained(pending, v.getDefiningOp());
      });
      if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
        if (loop.getNumResults() == 0 && fuseReductionIntoProducer(loop))
          continue; // the fused loop comes later, at the reduction's place
        if (fuseLockstepWalks(loop))
          continue; // likewise, at the second walk's place
        if (failed(flush()))
          return failure();
        if (loop.getNumResults() != 0) {
          // By rows where its iterations do not fold as one vector.
          Operation *resume = foldsFlat(loop) ? nullptr : mapReductionByRows(loop);
          next = resume ? resume : mapWholeReduction(loop, blockSize); // at its results' loads
        } else if (Operation *resume =
                       mapRowProgram(loop, sharedBytes, clusterBlocks,
                                     [&](scf::ParallelOp alone, int64_t minColumns) {
                                       if (!mapRowReductions(alone, minColumns))
                                         mapParallel(alone, minColumns);
                                     }))
          next = resume; // after the loops the program took in
        else if (!mapRowReductions(loop) && !mapSplitReduction(loop)) {
          loop = collapseNested(loop);
          if (!mapTransposedStaging(loop, blockSize)) {
            FailureOr<scf::ParallelOp> tiled = mapTiledTranspose(loop);
            if (failed(tiled))
              mapParallel(loop);
            else if (*tiled)
              mapParallel(*tiled); // the shapes the tiles do not suit
          }
        }
      } else if (auto fold = dyn_cast<scf::ForOp>(op);
                 fold && !usesDeviceValue && foldsAsWhole(fold)) {
        if (failed(flush()))
          return failure();
        next = mapWholeFold(fold, blockSize); // at its results' loads
      } else if (staysOnHost(&op) && !usesDeviceValue) {
        if (failed(flush()))
          return failure();
      } else {
        pending.push_back(&op);
      }
    }
    if (failed(flush()))
      return failure();
    // Buffers the kernel allocates live on the device (the host code's,
    // some in branches it chooses between).
    SmallVector<Operation *> hostMemoryOps;
    body.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp>(op))
        return WalkResult::skip();
      if (isa<memref::AllocOp, memref::DeallocOp>(op))
        hostMemoryOps.push_back(op);
      return WalkResult::advance();
    });
    for (Operation *op : hostMemoryOps) {
      OpBuilder b(op);
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        auto gpuAlloc = gpu::AllocOp::create(b, alloc.getLoc(), alloc.getType(),
                                             /*asyncToken=*/Type(), ValueRange{},
                                             alloc.getDynamicSizes(), alloc.getSymbolOperands());
        alloc.replaceAllUsesWith(gpuAlloc.getMemref());
        alloc.erase();
      } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        gpu::DeallocOp::create(b, dealloc.getLoc(), /*asyncToken=*/Type(), ValueRange{},
                               dealloc.getMemref());
        dealloc.erase();
      }
    }
    return success();
  }

  /// Runs `ops` (consecutive) in one thread.
  LogicalResult wrapSequential(ArrayRef<Operation *> ops) {
    Block *block = ops.front()->getBlock();
    for (Operation *op : ops)
      for (Value result : op->getResults())
        for (Operation *user : result.getUsers())
          if (!llvm::is_contained(ops, block->findAncestorOpInBlock(*user)))
            return op->emitOpError("computes a value that host code uses; nerve cannot run "
                                   "it on the GPU");
    OpBuilder b(ops.front());
    Location loc = ops.front()->getLoc();
    Value one = indexConstant(b, loc, 1);
    buildLaunch(b, loc, one, one, [&](OpBuilder &ib, gpu::LaunchOp launch) {
      for (Operation *op : ops)
        op->moveBefore(ib.getInsertionBlock(), ib.getInsertionPoint());
    });
    return success();
  }

  /// Rows of at least this many elements make a whole-tensor reduction of
  /// at least kMinRowsReductionElements go by rows (mapReductionByRows): a
  /// warp's lanes then have four loads of a row each (lanePartial). Below,
  /// its third launch costs more than it saves (H200, f32 sums: 1024 x 1024
  /// 9.6 us as it stands, 10.1 by rows; 256 x 1024 8.0 against 9.2).
  static constexpr int64_t kMinRowsReductionLength = 4 * kThreadsPerWarp;
  static constexpr int64_t kMinRowsReductionElements = int64_t(1) << 21;

  /// A whole-tensor reduction over two or more dimensions (one accumulator,
  /// from 0 by 1, a body that only loads) as a row reduction over the
  /// innermost dimension into a buffer of a value a row (mapRowReductions:
  /// a warp or a block a row, 16-byte loads where the buffers allow), then
  /// a whole-tensor reduction of that buffer (mapWholeReduction), when the rows
  /// have at least kMinRowsReductionLength elements and the tensor at
  /// least kMinRowsReductionElements at run time; the reduction as it
  /// stands otherwise. A thread of mapWholeReduction computes
  /// each element's position and address itself; over a row of contiguous
  /// elements a lane walks by vectors. Both forms are fixed trees that
  /// depend on the sizes alone: the same bits on every run, each its own.
  /// Reductions whose iterations fold as one vector (foldsFlat: a sum of a
  /// whole tensor) do not come here: their chunks ran faster at every
  /// shape measured (H200, f16 sum of 16384 x 4096 76.7 -> 81.8% of the
  /// copy bandwidth, f32 of 400000 x 130 57 -> 92%).
  /// Returns the op to continue mapping from, or null, changing nothing,
  /// when `loop` is not such a reduction or its rows are not a row
  /// reduction.
  Operation *mapReductionByRows(scf::ParallelOp loop) {
    unsigned rank = loop.getNumLoops();
    auto isConstant = [](ValueRange values, int64_t c) {
      return llvm::all_of(values, [&](Value v) { return getConstantIntValue(v) == c; });
    };
    if (loop.getNumResults() != 1 || rank < 2 || !isConstant(loop.getLowerBound(), 0) ||
        !isConstant(loop.getStep(), 1) || !loadsOnly(loop))
      return nullptr;
    auto reduce = llvm::cast<scf::ReduceOp>(loop.getBody()->getTerminator());
    Location loc = loop.getLoc();
    Value result = loop.getResult(0);
    Type type = result.getType();
    memref::StoreOp store = storedDirectly(loop, result);
    OpBuilder b(loop);
    // Where each branch stores the result, right after its reduction (so
    // that the reduction's last kernel stores it): where the loop's result
    // was stored, or a buffer read back after the branches.
    Value target = store ? store.getMemRef() : Value();
    ValueRange targetIndices = store ? store.getIndices() : ValueRange();
    if (!store)
      target = memref::AllocOp::create(b, loc, MemRefType::get({}, type));
    ValueRange sizes = loop.getUpperBound();
    // Its condition comes once the rows are known to map.
    Value undecided = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
    auto choice = scf::IfOp::create(b, loc, undecided, /*withElseRegion=*/true);
    // Each branch stores its result, then frees `scratch`.
    auto finish = [&](OpBuilder &fb, Value value, Value scratch) {
      memref::StoreOp::create(fb, loc, value, target, targetIndices);
      if (scratch)
        memref::DeallocOp::create(fb, loc, scratch);
    };

    // By rows: rows[k] folds row k (the outer positions, row-major), then
    // the rows' values fold into one.
    OpBuilder tb = OpBuilder::atBlockTerminator(&choice.getThenRegion().front());
    Value zero = indexConstant(tb, loc, 0), one = indexConstant(tb, loc, 1);
    Value rowCount = one;
    for (Value size : sizes.drop_back())
      rowCount = arith::MulIOp::create(tb, loc, rowCount, size);
    Value rows = memref::AllocOp::create(tb, loc, MemRefType::get({ShapedType::kDynamic}, type),
                                         ValueRange{rowCount});
    SmallVector<Value> zeros(rank - 1, zero), ones(rank - 1, one);
    auto byRow = scf::ParallelOp::create(tb, loc, zeros, sizes.drop_back(), ones);
    {
      OpBuilder rb = OpBuilder::atBlockBegin(byRow.getBody());
      auto fold = scf::ForOp::create(rb, loc, zero, sizes.back(), one, loop.getInitVals());
      OpBuilder fb = OpBuilder::atBlockBegin(fold.getBody());
      IRMapping m;
      SmallVector<Value> ivs(byRow.getInductionVars());
      ivs.push_back(fold.getInductionVar());
      m.map(loop.getInductionVars(), ivs);
      scf::YieldOp::create(
          fb, loc, combineEach(fb, reduce, fold.getRegionIterArgs(), reducedValues(fb, loop, m)));
      Value row = zero;
      for (auto [iv, size] : llvm::zip(byRow.getInductionVars(), sizes.drop_back()))
        row = arith::AddIOp::create(rb, loc, arith::MulIOp::create(rb, loc, row, size), iv);
      memref::StoreOp::create(rb, loc, fold.getResult(0), rows, ValueRange{row});
    }
    auto overRows = scf::ParallelOp::create(tb, loc, ValueRange{zero}, ValueRange{rowCount},
                                            ValueRange{one}, loop.getInitVals());
    {
      Block *rowsBody = overRows.getBody();
      if (!rowsBody->empty())
        rowsBody->back().erase(); // a reduce of nothing, if the builder made one
      OpBuilder rb = OpBuilder::atBlockEnd(rowsBody);
      Value v = memref::LoadOp::create(rb, loc, rows, overRows.getInductionVars());
      auto rowsReduce = scf::ReduceOp::create(rb, loc, ValueRange{v});
      Region &combine = rowsReduce.getReductions()[0];
      combine.getBlocks().clear(); // the builder's empty block
      IRMapping rm;
      reduce.getReductions()[0].cloneInto(&combine, rm);
    }
    finish(tb, overRows.getResult(0), rows);
    if (!mapRowReductions(byRow)) {
      choice.erase();
      undecided.getDefiningOp()->erase();
      if (!store)
        target.getDefiningOp()->erase();
      return nullptr;
    }
    b.setInsertionPoint(choice);
    Value elements = sizes.front();
    for (Value size : sizes.drop_front())
      elements = arith::MulIOp::create(b, loc, elements, size);
    Value wide = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, sizes.back(),
                              indexConstant(b, loc, kMinRowsReductionLength)),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, elements,
                              indexConstant(b, loc, kMinRowsReductionElements)));
    choice->setOperand(0, wide);
    undecided.getDefiningOp()->erase();
    mapWholeReduction(overRows, blockSize);

    // As it stands.
    OpBuilder eb = OpBuilder::atBlockTerminator(&choice.getElseRegion().front());
    auto whole = llvm::cast<scf::ParallelOp>(eb.clone(*loop));
    finish(eb, whole.getResult(0), Value());
    mapWholeReduction(whole, blockSize);

    // The loop (after the choice) goes; the mapping goes on at the read of
    // the result (which runs on the device with what uses it), or after the
    // choice.
    Operation *resume = nullptr;
    if (store) {
      store.erase();
    } else {
      resume = readBeforeFirstUse(result, target);
      OpBuilder end(loop->getBlock()->getTerminator());
      memref::DeallocOp::create(end, loc, target);
    }
    loop.erase();
    return resume ? resume : choice->getNextNode();
  }

  /// The value iteration `iv` of `r` folds in, built from a copy of its body.
  static Value laneValue(OpBuilder &b, const LaneReduction &r, IRMapping outer, Value iv) {
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
  static int64_t vectorsInFlight(int64_t vectorLanes) { return vectorLanes > 4 ? 8 : 4; }

  /// The vector lanes `r`'s loads along its index allow (16 bytes of the
  /// narrowest element type, at most 8), adding the buffers to `buffers`;
  /// 1 when it runs from other than 0 by 1 or loads none that way.
  static int64_t reductionLanes(const LaneReduction &r, llvm::SetVector<Value> &buffers) {
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
  static Value lanePartial(OpBuilder &b, Location loc, const LaneReduction &r,
                           IRMapping &mapping, Value lane, Value lanes, int64_t vectorLanes) {
    if (vectorLanes > 1) {
      Value iv = r.loop.getInductionVar();
      return vectorPartial(
          b, loc, r, mapping, Value(), mapping.lookupOrDefault(r.loop.getUpperBound()), lane,
          lanes, vectorLanes, vectorsInFlight(vectorLanes),
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
    return stridedPartial(
        b, loc, r, mapping.lookupOrDefault(r.loop.getLowerBound()),
        mapping.lookupOrDefault(r.loop.getUpperBound()),
        mapping.lookupOrDefault(r.loop.getStep()), lane, lanes,
        [&](OpBuilder &vb, Value iv) { return laneValue(vb, r, mapping, iv); });
  }

  /// The iterations a thread of a row's block takes at least before the
  /// row runs on a block instead of a warp: a whole round of its loads in
  /// flight (lanePartial's unrolled chunk).
  static int64_t blockRowIterations(int64_t threads, int64_t vectorLanes) {
    return threads * (vectorLanes > 1 ? vectorLanes * vectorsInFlight(vectorLanes) : 4);
  }

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
  bool mapRowReductions(scf::ParallelOp loop, int64_t minColumns = 0) {
    Block *body = loop.getBody();
    llvm::DenseMap<Operation *, LaneReduction> reductions;
    for (Operation &op : body->without_terminator()) {
      if (auto inner = dyn_cast<scf::ForOp>(op)) {
        std::optional<LaneReduction> r = matchLaneReduction(inner);
        if (!r)
          return false;
        auto lb = getConstantIntValue(inner.getLowerBound());
        auto ub = getConstantIntValue(inner.getUpperBound());
        if (lb && ub && (*ub - *lb) / *getConstantIntValue(inner.getStep()) < kMinStaticTrip)
          return false;
        reductions[&op] = *r;
        continue;
      }
      if (op.getNumRegions() != 0)
        return false;
      // Writes happen once, on lane 0: they may not produce values.
      if (!isa<memref::LoadOp>(op) && !isMemoryEffectFree(&op) && op.getNumResults() != 0)
        return false;
    }
    if (reductions.empty())
      return false;

    Location loc = loop.getLoc();
    OpBuilder b(loop);
    SmallVector<Value> counts;
    Value rows;
    std::tie(counts, rows) = tripCounts(b, loop);
    int64_t threads =
        std::max<int64_t>(kThreadsPerWarp, blockSize / kThreadsPerWarp * kThreadsPerWarp);
    // `rowBlocks`: a block per row (all its threads split each reduction),
    // else a warp per row.
    auto buildLaunch = [&](OpBuilder &hb, int64_t vectorLanes, bool rowBlocks) {
      int64_t rowsPerBlock = rowBlocks ? 1 : threads / kThreadsPerWarp;
      Value block = indexConstant(hb, loc, threads);
      Value perBlock = indexConstant(hb, loc, rowsPerBlock);
      buildLaunchOver(hb, loc, rows, perBlock, block, [&](OpBuilder &ib, gpu::LaunchOp launch) {
        Value tid = launch.getThreadIds().x;
        Value warpSize = indexConstant(ib, loc, kThreadsPerWarp);
        Value lane = arith::RemUIOp::create(ib, loc, tid, warpSize);
        Value warp = arith::DivUIOp::create(ib, loc, tid, warpSize);
        Value isLaneZero = arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::eq, lane,
                                                 indexConstant(ib, loc, 0));
        Value first = arith::MulIOp::create(ib, loc, launch.getBlockIds().x, perBlock);
        Value stride = arith::MulIOp::create(ib, loc, launch.getGridSize().x, perBlock);
        Value isLeader = isLaneZero;
        if (rowBlocks)
          isLeader = arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::eq, tid,
                                           indexConstant(ib, loc, 0));
        else
          first = arith::AddIOp::create(ib, loc, first, warp);
        // Every lane of a warp (of a block, for rowBlocks: the barriers
        // see all threads) walks the same rows.
        auto rowLoop = scf::ForOp::create(ib, loc, first, rows, stride);
        OpBuilder rb = OpBuilder::atBlockBegin(rowLoop.getBody());
        IRMapping mapping;
        mapping.map(loop.getInductionVars(),
                    delinearize(rb, loc, loop, counts, rowLoop.getInductionVar()));
        DenseMap<Type, Value> scratchOf;
        auto reduce = [&](const LaneReduction &r) {
          Value partial = lanePartial(rb, loc, r, mapping, rowBlocks ? tid : lane,
                                      rowBlocks ? block : warpSize, vectorLanes);
          partial = warpButterfly(rb, loc, r, partial);
          if (rowBlocks) {
            Value &scratch = scratchOf[partial.getType()];
            if (!scratch)
              scratch = workgroupArray(launch, partial.getType(), threads / kThreadsPerWarp, loc);
            partial = blockCombine(rb, loc, r, partial, scratch, warp, isLaneZero,
                                   indexConstant(rb, loc, threads / kThreadsPerWarp));
          }
          return combineAs(rb, r, mapping.lookupOrDefault(r.loop.getInitArgs()[0]), partial);
        };
        for (Operation &op : body->without_terminator()) {
          if (auto it = reductions.find(&op); it != reductions.end()) {
            mapping.map(op.getResult(0), reduce(it->second));
          } else if (isa<memref::LoadOp>(op) || isMemoryEffectFree(&op)) {
            rb.clone(op, mapping);
          } else {
            auto once = scf::IfOp::create(rb, loc, isLeader, /*withElseRegion=*/false);
            OpBuilder ob = OpBuilder::atBlockBegin(&once.getThenRegion().front());
            ob.clone(op, mapping);
          }
        }
      });
    };

    // Each reduction's trip count on the host, when it is known there.
    SmallVector<Value> trips;
    for (Operation &op : body->without_terminator())
      if (auto it = reductions.find(&op); it != reductions.end())
        trips.push_back(hostTripCount(b, it->second.loop, loop));
    bool tripsKnown = llvm::all_of(trips, [](Value t) { return bool(t); });
    // The shortest reduction's trip count when all are known statically.
    std::optional<int64_t> staticTrip;
    for (auto &entry : reductions) {
      scf::ForOp inner = entry.second.loop;
      auto lb = getConstantIntValue(inner.getLowerBound());
      auto ub = getConstantIntValue(inner.getUpperBound());
      auto step = getConstantIntValue(inner.getStep());
      if (!lb || !ub || !step || *step <= 0) {
        staticTrip.reset();
        break;
      }
      int64_t trip = std::max<int64_t>(0, (*ub - *lb + *step - 1) / *step);
      staticTrip = staticTrip ? std::min(*staticTrip, trip) : trip;
    }

    // A block per row where every reduction is long enough.
    auto build = [&](OpBuilder &hb, int64_t vectorLanes) {
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
    };

    // Vectors when every reduction allows the same lanes and its trip count
    // is known on the host.
    int64_t vectorLanes = 0;
    Value fits;
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
      if (!trip || (vectorLanes && lanes != vectorLanes)) {
        vectorLanes = 1;
        break;
      }
      vectorLanes = lanes;
      Value ok = vectorAccessesFit(b, loc, buffers.getArrayRef(), lanes, trip,
                                   indexConstant(b, loc, 0));
      fits = fits ? b.createOrFold<arith::AndIOp>(loc, fits, ok) : ok;
    }
    buildVectorsIfFit(b, loc, fits, vectorLanes, build);
    loop.erase();
    return true;
  }

  /// `minColumns`: what the caller knows the innermost dimension's
  /// iterations to be at least (half a tile or more: only the tiled mapping
  /// is built).
  void mapParallel(scf::ParallelOp loop, int64_t minColumns = 0) {
    loop = collapseNested(loop);
    Location loc = loop.getLoc();
    OpBuilder b(loop);
    SmallVector<Value> counts;
    Value total;
    std::tie(counts, total) = tripCounts(b, loop);
    // Straight-line bodies run `coarsen` iterations per thread, interleaved
    // op by op, so each thread has that many loads in flight.
    int64_t perThread = isStraightLine(loop.getBody()) ? std::max<int64_t>(coarsen, 1) : 1;
    // Threads per block: the option, or fewer (a whole number of warps)
    // when the trip count is known and smaller.
    int64_t threads = blockSize;
    if (auto c = getConstantIntValue(total); c) {
      perThread = std::min<int64_t>(perThread, std::max<int64_t>(1, *c / threads));
      if (*c < threads)
        threads = std::max<int64_t>(32, (*c + 31) / 32 * 32);
    }
    // A straight-line loop over rows of at least half a tile of columns
    // runs tiles of a row per block: no division per element (finding an
    // element's indices from its flat position costs a 64-bit division per
    // dimension, which made 2-D maps compute-bound on an H200: 55% of the
    // copy bandwidth against 86% for the same map in 1-D).
    int64_t tileWidth = threads * perThread;
    auto scalarMapping = [&](OpBuilder &sb) {
      if (perThread == 1 && mapLockstep(sb, loop, counts, total, threads))
        return;
      if (perThread > 1 && loop.getNumLoops() >= 2) {
        Value columns = counts.back();
        Value wide = sb.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::uge, columns,
                                                    indexConstant(sb, loc, tileWidth / 2));
        if (minColumns >= tileWidth / 2)
          wide = indexConstant(sb, loc, 1);
        if (auto known = getConstantIntValue(wide)) {
          if (*known)
            mapRowTiles(sb, loop, counts, threads, perThread);
          else
            mapFlat(sb, loop, counts, total, threads, perThread);
        } else {
          auto choice = scf::IfOp::create(sb, loc, wide, /*withElseRegion=*/true);
          OpBuilder tb = OpBuilder::atBlockBegin(&choice.getThenRegion().front());
          mapRowTiles(tb, loop, counts, threads, perThread);
          OpBuilder eb = OpBuilder::atBlockBegin(&choice.getElseRegion().front());
          mapFlat(eb, loop, counts, total, threads, perThread);
        }
      } else {
        mapFlat(sb, loop, counts, total, threads, perThread);
      }
    };
    // Two 16-byte vectors per access in flight per thread (straight-line
    // bodies), as many bytes as `coarsen` f32 iterations twice over.
    if (!mapVectorLanes(b, loop, counts, total, threads, std::max<int64_t>(perThread / 2, 1),
                        scalarMapping))
      scalarMapping(b);
    loop.erase();
  }

  /// Clones `loop`'s body once per mapping, op by op (their loads in flight
  /// together); a store of an iteration that is not `valid` is skipped.
  static void emitInterleaved(OpBuilder &ib, Location loc, scf::ParallelOp loop,
                              MutableArrayRef<IRMapping> mappings, ArrayRef<Value> valid) {
    for (Operation &op : loop.getBody()->without_terminator()) {
      for (auto [mapping, ok] : llvm::zip(mappings, valid)) {
        if (ok && isa<memref::StoreOp>(op)) {
          auto inRange = scf::IfOp::create(ib, loc, ok, /*withElseRegion=*/false);
          OpBuilder tb = OpBuilder::atBlockBegin(&inRange.getThenRegion().front());
          tb.clone(op, mapping);
        } else {
          ib.clone(op, mapping);
        }
      }
    }
  }

  /// Every iteration by its flat position: thread-consecutive positions,
  /// `perThread` of them a grid apart per thread.
  static void mapFlat(OpBuilder &b, scf::ParallelOp loop, ArrayRef<Value> counts, Value total,
                      int64_t threads, int64_t perThread) {
    Location loc = loop.getLoc();
    Value block = indexConstant(b, loc, threads);
    Value perBlock = perThread == 1 ? block : indexConstant(b, loc, threads * perThread);
    buildLaunchOver(b, loc, total, perBlock, block, [&](OpBuilder &ib, gpu::LaunchOp launch) {
      Value first = arith::AddIOp::create(
          ib, loc, arith::MulIOp::create(ib, loc, launch.getBlockIds().x, block),
          launch.getThreadIds().x);
      Value stride = arith::MulIOp::create(ib, loc, launch.getGridSize().x, block);
      Value step = perThread == 1 ? stride
                                  : arith::MulIOp::create(ib, loc, stride,
                                                          indexConstant(ib, loc, perThread))
                                        .getResult();
      auto strided = scf::ForOp::create(ib, loc, first, total, step);
      ib.setInsertionPointToStart(strided.getBody());
      Value last = arith::SubIOp::create(ib, loc, total, indexConstant(ib, loc, 1));
      // Iteration j of this thread: base + j * stride; past the end it
      // loads at the last iteration's indices and stores nothing. Each is
      // delinearized on its own (innermost dimension fastest): tracking
      // the position incrementally instead measured slower on an H200, the
      // address of each iteration then waiting on the previous one's.
      SmallVector<IRMapping> mappings(perThread);
      SmallVector<Value> valid(perThread);
      for (int64_t j = 0; j < perThread; ++j) {
        Value linear = strided.getInductionVar();
        if (j > 0) {
          linear = arith::AddIOp::create(
              ib, loc, linear,
              arith::MulIOp::create(ib, loc, stride, indexConstant(ib, loc, j)));
          valid[j] = arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::ult, linear, total);
          linear = arith::SelectOp::create(ib, loc, valid[j], linear, last);
        }
        SmallVector<Value> ivs = delinearize(ib, loc, loop, counts, linear);
        mappings[j].map(loop.getInductionVars(), ivs);
      }
      emitInterleaved(ib, loc, loop, mappings, valid);
    });
  }

  /// Blocks over (row, tile of `threads * perThread` columns): a block's
  /// row indices come from one division per tile; thread t takes columns
  /// t, t + threads, ... of the tile. Past the last column it loads at the
  /// last one and stores nothing.
  static void mapRowTiles(OpBuilder &b, scf::ParallelOp loop, ArrayRef<Value> counts,
                          int64_t threads, int64_t perThread) {
    Location loc = loop.getLoc();
    unsigned rank = loop.getNumLoops();
    Value columns = counts.back();
    Value width = indexConstant(b, loc, threads * perThread);
    Value tiles = arith::CeilDivUIOp::create(b, loc, columns, width);
    Value rows = indexConstant(b, loc, 1);
    for (Value c : counts.drop_back())
      rows = b.createOrFold<arith::MulIOp>(loc, rows, c);
    Value work = arith::MulIOp::create(b, loc, rows, tiles);
    Value block = indexConstant(b, loc, threads);
    buildLaunchOver(b, loc, work, indexConstant(b, loc, 1), block,
                    [&](OpBuilder &ib, gpu::LaunchOp launch) {
      auto items = scf::ForOp::create(ib, loc, launch.getBlockIds().x, work,
                                      launch.getGridSize().x);
      OpBuilder lb = OpBuilder::atBlockBegin(items.getBody());
      Value item = items.getInductionVar();
      Value row = arith::DivUIOp::create(lb, loc, item, tiles);
      Value tile = arith::SubIOp::create(lb, loc, item, arith::MulIOp::create(lb, loc, row, tiles));
      SmallVector<Value> ivs = delinearize(lb, loc, loop, counts, row, rank - 1);
      ivs.push_back(Value());
      Value first = arith::AddIOp::create(lb, loc, arith::MulIOp::create(lb, loc, tile, width),
                                          launch.getThreadIds().x);
      Value last = arith::SubIOp::create(lb, loc, columns, indexConstant(lb, loc, 1));
      SmallVector<IRMapping> mappings(perThread);
      SmallVector<Value> valid(perThread);
      for (int64_t j = 0; j < perThread; ++j) {
        Value col = j == 0 ? first
                           : arith::AddIOp::create(lb, loc, first,
                                                   indexConstant(lb, loc, j * threads))
                                 .getResult();
        valid[j] = arith::CmpIOp::create(lb, loc, arith::CmpIPredicate::ult, col, columns);
        col = arith::SelectOp::create(lb, loc, valid[j], col, last);
        ivs[rank - 1] = arith::AddIOp::create(
            lb, loc, loop.getLowerBound()[rank - 1],
            arith::MulIOp::create(lb, loc, col, loop.getStep()[rank - 1]));
        mappings[j].map(loop.getInductionVars(), ivs);
      }
      emitInterleaved(lb, loc, loop, mappings, valid);
    });
  }
};

} // namespace
