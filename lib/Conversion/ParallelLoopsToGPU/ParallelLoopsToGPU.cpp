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
          Operation *resume = mapReductionByRows(loop, func);
          next = resume ? resume : mapReduction(loop, func); // resume at its results' loads
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


  /// Combines each thread's `values` over the block, pairwise in a fixed
  /// tree through workgroup memory `shared`; the block's result ends in
  /// element 0.
  static void blockTree(OpBuilder &b, Location loc, scf::ReduceOp reduce, ValueRange shared,
                        Value tid, ValueRange values, int64_t threads) {
    for (auto [buffer, v] : llvm::zip(shared, values))
      memref::StoreOp::create(b, loc, v, buffer, ValueRange{tid});
    gpu::BarrierOp::create(b, loc);
    for (int64_t half = threads / 2; half >= 1; half /= 2) {
      Value active = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tid,
                                           indexConstant(b, loc, half));
      auto guard = scf::IfOp::create(b, loc, active, /*withElseRegion=*/false);
      OpBuilder gb = OpBuilder::atBlockBegin(&guard.getThenRegion().front());
      Value other = arith::AddIOp::create(gb, loc, tid, indexConstant(gb, loc, half));
      for (auto [k, buffer] : llvm::enumerate(shared)) {
        Value mine = memref::LoadOp::create(gb, loc, buffer, ValueRange{tid});
        Value theirs = memref::LoadOp::create(gb, loc, buffer, ValueRange{other});
        Value r = combineWith(gb, reduce.getReductions()[k], mine, theirs);
        memref::StoreOp::create(gb, loc, r, buffer, ValueRange{tid});
      }
      gpu::BarrierOp::create(b, loc);
    }
  }

  /// Iterations of a strided fold whose loads are issued together before
  /// they are folded in (foldStridedAhead).
  static constexpr int64_t kStridedLoadsAhead = 8;

  /// Whether `loop`'s body reads memory but writes none.
  static bool loadsOnly(scf::ParallelOp loop) {
    WalkResult r = loop.getBody()->walk([](Operation *op) {
      return isa<memref::LoadOp>(op) || isMemoryEffectFree(op) ? WalkResult::advance()
                                                               : WalkResult::interrupt();
    });
    return !r.wasInterrupted();
  }

  /// What `loop`'s body reduces at the iteration `mapping` binds its
  /// induction variables to, from a copy of its body.
  static SmallVector<Value> reducedValues(OpBuilder &b, scf::ParallelOp loop, IRMapping &mapping) {
    for (Operation &op : loop.getBody()->without_terminator())
      b.clone(op, mapping);
    return mapped(mapping, loop.getBody()->getTerminator()->getOperands());
  }

  /// `loop`'s reductions over iterations first, first + stride, ... below
  /// `total`, in that order, one iteration at a time; their results.
  static SmallVector<Value> foldStrided(OpBuilder &b, Location loc, scf::ParallelOp loop,
                                        ArrayRef<Value> counts, Value total, Value first,
                                        Value stride) {
    auto reduce = llvm::cast<scf::ReduceOp>(loop.getBody()->getTerminator());
    auto strided = scf::ForOp::create(b, loc, first, total, stride, loop.getInitVals());
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(strided.getBody());
    IRMapping mapping;
    mapping.map(loop.getInductionVars(),
                delinearize(b, loc, loop, counts, strided.getInductionVar()));
    scf::YieldOp::create(
        b, loc,
        combineEach(b, reduce, strided.getRegionIterArgs(), reducedValues(b, loop, mapping)));
    return SmallVector<Value>(strided.getResults());
  }

  /// `linear`'s digits in the mixed radix of `counts` (the outermost one
  /// unbounded): the positions along each dimension. A count of 0 divides
  /// as 1 (there is no iteration then).
  static SmallVector<Value> digitsOf(OpBuilder &b, Location loc, ArrayRef<Value> counts,
                                     Value linear) {
    Value one = indexConstant(b, loc, 1);
    SmallVector<Value> digits(counts.size());
    Value rest = linear;
    for (size_t d = counts.size(); d-- > 1;) {
      Value radix = arith::MaxUIOp::create(b, loc, counts[d], one);
      digits[d] = arith::RemUIOp::create(b, loc, rest, radix);
      rest = arith::DivUIOp::create(b, loc, rest, radix);
    }
    digits[0] = rest;
    return digits;
  }

  /// `digits` plus `step` (both in the mixed radix of `counts`, each digit
  /// but the outermost below its count): a carry a digit, no division.
  static SmallVector<Value> addDigits(OpBuilder &b, Location loc, ArrayRef<Value> counts,
                                      ArrayRef<Value> digits, ArrayRef<Value> step) {
    SmallVector<Value> sum(digits.size());
    Value carry;
    for (size_t d = digits.size(); d-- > 0;) {
      Value s = arith::AddIOp::create(b, loc, digits[d], step[d]);
      if (carry)
        s = arith::AddIOp::create(b, loc, s, carry);
      if (d > 0) {
        Value over = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, s, counts[d]);
        s = arith::SelectOp::create(b, loc, over, arith::SubIOp::create(b, loc, s, counts[d]), s);
        carry = arith::IndexCastUIOp::create(b, loc, b.getIndexType(),
                                             arith::ExtUIOp::create(b, loc, b.getI64Type(), over));
      }
      sum[d] = s;
    }
    return sum;
  }

  /// foldStrided for a body that only loads: kStridedLoadsAhead iterations
  /// a round, all their loads issued before any is folded in, then folded
  /// in the same order (the same bits). A thread's position advances by
  /// `strideDigits` (the stride's digitsOf, the same for every thread:
  /// computed on the host) instead of a division an iteration;
  /// an iteration past `total` reads the round's first one and is not
  /// folded. A thread that folded one element at a time had one load in
  /// flight: a whole-tensor f32 sum over 16384 x 4096 ran at 37% of the
  /// copy bandwidth on an H200.
  static SmallVector<Value> foldStridedAhead(OpBuilder &b, Location loc, scf::ParallelOp loop,
                                             ArrayRef<Value> counts, Value total, Value first,
                                             Value stride, ArrayRef<Value> strideDigits) {
    auto reduce = llvm::cast<scf::ReduceOp>(loop.getBody()->getTerminator());
    size_t rank = counts.size(), accs = loop.getNumResults();
    SmallVector<Value> inits = digitsOf(b, loc, counts, first);
    llvm::append_range(inits, loop.getInitVals());
    Value roundStride =
        arith::MulIOp::create(b, loc, stride, indexConstant(b, loc, kStridedLoadsAhead));
    auto rounds = scf::ForOp::create(b, loc, first, total, roundStride, inits);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(rounds.getBody());
    ValueRange carried = rounds.getRegionIterArgs();
    SmallVector<Value> roundStart(carried.take_front(rank));
    SmallVector<Value> acc(carried.drop_front(rank));
    SmallVector<Value> at = roundStart, present;
    SmallVector<SmallVector<Value>> values;
    Value linear = rounds.getInductionVar();
    for (int64_t k = 0; k < kStridedLoadsAhead; ++k) {
      SmallVector<Value> position = at;
      if (k > 0) {
        linear = arith::AddIOp::create(b, loc, linear, stride);
        Value in = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, linear, total);
        present.push_back(in);
        for (auto [p, safe] : llvm::zip(position, roundStart))
          p = arith::SelectOp::create(b, loc, in, p, safe);
      }
      IRMapping mapping;
      for (auto [iv, p, lb, st] :
           llvm::zip(loop.getInductionVars(), position, loop.getLowerBound(), loop.getStep()))
        mapping.map(iv, arith::AddIOp::create(b, loc, lb, arith::MulIOp::create(b, loc, p, st)));
      values.push_back(reducedValues(b, loop, mapping));
      at = addDigits(b, loc, counts, at, strideDigits);
    }
    for (int64_t k = 0; k < kStridedLoadsAhead; ++k) {
      SmallVector<Value> next = combineEach(b, reduce, acc, values[k]);
      for (size_t i = 0; i < accs; ++i)
        acc[i] =
            k == 0 ? next[i] : arith::SelectOp::create(b, loc, present[k - 1], next[i], acc[i]);
    }
    SmallVector<Value> yielded = at;
    llvm::append_range(yielded, acc);
    scf::YieldOp::create(b, loc, yielded);
    return SmallVector<Value>(rounds.getResults().drop_front(rank));
  }

  /// Chunks a round of foldChunksAhead: four 16-byte loads a buffer in
  /// flight for each thread.
  static constexpr int64_t kChunksAhead = 4;

  /// A 1-D reduction (planChunks: `lanes` a chunk) folded by chunks: the
  /// thread `first` of `stride` takes the whole chunks first,
  /// first + stride, ..., kChunksAhead a round, all their loads issued
  /// before any is folded, each chunk's lanes folded in order; then thread
  /// 0 folds the iterations after the last whole chunk, one at a time. By
  /// vectors (`byVectors`, a vector load a chunk) or by scalars, the same
  /// values are folded in the same order: the same bits, whichever form
  /// the buffers' alignment allows. One 16-byte load stands for up to
  /// eight of foldStridedAhead's, and the index arithmetic is a chunk's,
  /// not an element's.
  static SmallVector<Value> foldChunksAhead(OpBuilder &b, Location loc, scf::ParallelOp loop,
                                            int64_t lanes, Value total, Value first, Value stride,
                                            bool byVectors) {
    auto reduce = llvm::cast<scf::ReduceOp>(loop.getBody()->getTerminator());
    Value lanesValue = indexConstant(b, loc, lanes);
    Value chunks = arith::DivUIOp::create(b, loc, total, lanesValue);
    Value lb = loop.getLowerBound().front(), iv = loop.getInductionVars().front();
    Value roundStride = arith::MulIOp::create(b, loc, stride, indexConstant(b, loc, kChunksAhead));
    auto rounds = scf::ForOp::create(b, loc, first, chunks, roundStride, loop.getInitVals());
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(rounds.getBody());
      Value roundFirst = rounds.getInductionVar(), at = roundFirst;
      SmallVector<Value> present;
      SmallVector<SmallVector<SmallVector<Value>>> values;
      for (int64_t k = 0; k < kChunksAhead; ++k) {
        Value chunk = roundFirst;
        if (k > 0) {
          at = arith::AddIOp::create(b, loc, at, stride);
          present.push_back(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, at, chunks));
          chunk = arith::SelectOp::create(b, loc, present.back(), at, roundFirst);
        }
        Value start =
            arith::AddIOp::create(b, loc, lb, arith::MulIOp::create(b, loc, chunk, lanesValue));
        SmallVector<IRMapping> maps = laneMappings(b, loc, IRMapping(), iv, start, lanes);
        values.push_back(chunkValues(b, loc, loop, maps, byVectors));
      }
      SmallVector<Value> acc(rounds.getRegionIterArgs());
      for (int64_t k = 0; k < kChunksAhead; ++k) {
        SmallVector<Value> next = acc;
        for (ArrayRef<Value> lane : values[k])
          next = combineEach(b, reduce, next, lane);
        for (size_t i = 0; i < acc.size(); ++i)
          acc[i] =
              k == 0 ? next[i] : arith::SelectOp::create(b, loc, present[k - 1], next[i], acc[i]);
      }
      scf::YieldOp::create(b, loc, acc);
    }
    // The iterations after the last whole chunk (fewer than a chunk).
    Value isFirst =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, first, indexConstant(b, loc, 0));
    auto tail = scf::IfOp::create(b, loc, loop.getResultTypes(), isFirst, /*withElseRegion=*/true);
    {
      OpBuilder tb = OpBuilder::atBlockBegin(&tail.getThenRegion().front());
      auto rest = scf::ForOp::create(tb, loc, arith::MulIOp::create(tb, loc, chunks, lanesValue),
                                     total, indexConstant(tb, loc, 1), rounds.getResults());
      OpBuilder fb = OpBuilder::atBlockBegin(rest.getBody());
      IRMapping mapping;
      mapping.map(iv, arith::AddIOp::create(fb, loc, lb, rest.getInductionVar()));
      scf::YieldOp::create(
          fb, loc,
          combineEach(fb, reduce, rest.getRegionIterArgs(), reducedValues(fb, loop, mapping)));
      scf::YieldOp::create(tb, loc, rest.getResults());
      OpBuilder eb = OpBuilder::atBlockBegin(&tail.getElseRegion().front());
      scf::YieldOp::create(eb, loc, rounds.getResults());
    }
    return SmallVector<Value>(tail.getResults());
  }

  /// A read of the 0-d `buffer` in place of `result` (a loop's), just
  /// before the first op of the loop's block that uses it (host ops in
  /// between stay on the host); null when none does.
  static memref::LoadOp readBeforeFirstUse(Value result, Value buffer) {
    Block *block = result.getDefiningOp()->getBlock();
    Operation *firstUse = nullptr;
    for (Operation *user : result.getUsers()) {
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      if (inBlock && (!firstUse || inBlock->isBeforeInBlock(firstUse)))
        firstUse = inBlock;
    }
    if (!firstUse)
      return {};
    OpBuilder at(firstUse);
    auto load = memref::LoadOp::create(at, result.getLoc(), buffer, ValueRange{});
    result.replaceAllUsesWith(load.getResult());
    return load;
  }

  /// The store that is `result`'s only use, when the reduction's last
  /// kernel can do it instead of a launch of its own: right after `loop`
  /// (nothing between touches memory), into a buffer at indices defined
  /// before the loop (a tdim.reduce into a 0-d output).
  static memref::StoreOp storedDirectly(scf::ParallelOp loop, Value result) {
    if (!result.hasOneUse())
      return {};
    auto store = dyn_cast<memref::StoreOp>(*result.getUsers().begin());
    if (!store || store.getValueToStore() != result || store->getBlock() != loop->getBlock())
      return {};
    for (Operation *op = loop->getNextNode(); op != store; op = op->getNextNode())
      if (!isMemoryEffectFree(op))
        return {};
    auto definedBefore = [&](Value v) {
      Operation *def = v.getDefiningOp();
      return !def || def->getBlock() != loop->getBlock() || def->isBeforeInBlock(loop);
    };
    if (!definedBefore(store.getMemRef()) || !llvm::all_of(store.getIndices(), definedBefore))
      return {};
    return store;
  }

  /// A parallel loop with reductions (a reduction to single values) as a
  /// fixed tree: kernel 1 has each thread of up to 1024 blocks fold its
  /// grid-stride share in order (walking in lockstep when the body walks
  /// rows, LockstepLoops.cpp), then each block combine its threads'
  /// values pairwise; kernel 2, one block, does the same over the blocks'
  /// partial values. The shape of the tree depends only on the trip count:
  /// the same bits on every run. `init` must be the identity of the
  /// combination (tdim.reduce's is). Returns the op to continue mapping
  /// from: the loads that replace the results come before their uses.
  Operation *mapReduction(scf::ParallelOp loop, func::FuncOp func) {
    Location loc = loop.getLoc();
    OpBuilder b(loop);
    auto reduce = llvm::cast<scf::ReduceOp>(loop.getBody()->getTerminator());
    SmallVector<Value> counts;
    Value total;
    std::tie(counts, total) = tripCounts(b, loop);
    int64_t threads =
        lockstepThreads(loop, int64_t(1) << llvm::Log2_64(std::max<int64_t>(blockSize, 32)));
    Value block = indexConstant(b, loc, threads);
    Value one = indexConstant(b, loc, 1);
    // A thread folding ahead (foldStridedAhead) takes a whole round before
    // a block more is launched: one with a single iteration spent its
    // rounds' index arithmetic on loads past the end (H200, f32 sum of
    // 256 x 1024: 11.2 us against 7.8 an iteration at a time).
    bool ahead = !walksInLockstep(loop) && loadsOnly(loop);
    // A 1-D one folds by chunks (foldChunksAhead), a round of chunks a
    // thread likewise.
    std::optional<ChunkPlan> chunked = ahead ? planChunks(loop) : std::nullopt;
    Value perBlock = ahead ? indexConstant(b, loc, threads * kStridedLoadsAhead) : block;
    Value work = total;
    if (chunked) {
      perBlock = indexConstant(b, loc, threads * kChunksAhead);
      work = arith::DivUIOp::create(b, loc, total, indexConstant(b, loc, chunked->lanes));
    }
    Value blocks = arith::MinUIOp::create(
        b, loc,
        arith::CeilDivUIOp::create(b, loc, arith::MaxUIOp::create(b, loc, work, one), perBlock),
        indexConstant(b, loc, 1024));
    SmallVector<Value> strideDigits;
    if (ahead && !chunked)
      strideDigits = digitsOf(b, loc, counts, arith::MulIOp::create(b, loc, blocks, block));
    SmallVector<Value> partials, finals;
    SmallVector<memref::StoreOp> direct;
    for (auto [t, result] : llvm::zip(loop.getResultTypes(), loop.getResults())) {
      partials.push_back(memref::AllocOp::create(b, loc, MemRefType::get({ShapedType::kDynamic}, t),
                                                 ValueRange{blocks}));
      direct.push_back(storedDirectly(loop, result));
      finals.push_back(direct.back() ? Value()
                                     : memref::AllocOp::create(b, loc, MemRefType::get({}, t)));
    }
    auto launchWithShared = [&](OpBuilder &lb, Value grid,
                                function_ref<void(OpBuilder &, gpu::LaunchOp, ValueRange)> fn) {
      buildLaunch(lb, loc, grid, block, [&](OpBuilder &ib, gpu::LaunchOp launch) {
        SmallVector<Value> shared;
        for (Type t : loop.getResultTypes())
          shared.push_back(workgroupArray(launch, t, threads, loc));
        fn(ib, launch, shared);
      });
    };
    auto whenFirstThread = [&](OpBuilder &ib, Value tid, function_ref<void(OpBuilder &)> fn) {
      Value first = arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::eq, tid,
                                          indexConstant(ib, loc, 0));
      auto guard = scf::IfOp::create(ib, loc, first, /*withElseRegion=*/false);
      OpBuilder gb = OpBuilder::atBlockBegin(&guard.getThenRegion().front());
      fn(gb);
    };

    // Kernel 1: every thread folds its share (in lockstep when the body
    // walks rows, as a neuron's time loop does), every block its threads.
    auto foldShares = [&](OpBuilder &kb, bool byVectors) {
      launchWithShared(kb, blocks, [&](OpBuilder &ib, gpu::LaunchOp launch, ValueRange shared) {
        Value tid = launch.getThreadIds().x, bid = launch.getBlockIds().x;
        std::optional<SmallVector<Value>> folded =
            foldInLockstep(ib, launch, loop, counts, total, block);
        if (!folded) {
          Value first =
              arith::AddIOp::create(ib, loc, arith::MulIOp::create(ib, loc, bid, block), tid);
          Value stride = arith::MulIOp::create(ib, loc, launch.getGridSize().x, block);
          if (chunked)
            folded =
                foldChunksAhead(ib, loc, loop, chunked->lanes, total, first, stride, byVectors);
          else if (ahead)
            folded = foldStridedAhead(ib, loc, loop, counts, total, first, stride, strideDigits);
          else
            folded = foldStrided(ib, loc, loop, counts, total, first, stride);
        }
        blockTree(ib, loc, reduce, shared, tid, *folded, threads);
        whenFirstThread(ib, tid, [&](OpBuilder &gb) {
          for (auto [buffer, partial] : llvm::zip(shared, partials)) {
            Value v =
                memref::LoadOp::create(gb, loc, buffer, ValueRange{indexConstant(gb, loc, 0)});
            memref::StoreOp::create(gb, loc, v, partial, ValueRange{bid});
          }
        });
      });
    };
    if (chunked) {
      // By vectors where every buffer's chunks are aligned, else by scalars.
      Value fits = vectorAccessesFit(b, loc, chunked->buffers, chunked->lanes,
                                     indexConstant(b, loc, 0), loop.getLowerBound().front());
      buildVectorsIfFit(b, loc, fits, chunked->lanes,
                        [&](OpBuilder &kb, int64_t lanes) { foldShares(kb, lanes > 1); });
    } else {
      foldShares(b, false);
    }
    // Kernel 2: one block over the partial values.
    launchWithShared(b, one, [&](OpBuilder &ib, gpu::LaunchOp launch, ValueRange shared) {
      Value tid = launch.getThreadIds().x;
      auto strided = scf::ForOp::create(ib, loc, tid, blocks, block, loop.getInitVals());
      {
        OpBuilder::InsertionGuard guard(ib);
        ib.setInsertionPointToStart(strided.getBody());
        SmallVector<Value> values = llvm::map_to_vector(partials, [&](Value partial) -> Value {
          return memref::LoadOp::create(ib, loc, partial, ValueRange{strided.getInductionVar()});
        });
        scf::YieldOp::create(ib, loc,
                             combineEach(ib, reduce, strided.getRegionIterArgs(), values));
      }
      blockTree(ib, loc, reduce, shared, tid, strided.getResults(), threads);
      whenFirstThread(ib, tid, [&](OpBuilder &gb) {
        for (auto [buffer, result, store] : llvm::zip(shared, finals, direct)) {
          Value v = memref::LoadOp::create(gb, loc, buffer, ValueRange{indexConstant(gb, loc, 0)});
          if (store)
            memref::StoreOp::create(gb, loc, v, store.getMemRef(), store.getIndices());
          else
            memref::StoreOp::create(gb, loc, v, result, ValueRange{});
        }
      });
    });
    for (memref::StoreOp store : direct)
      if (store)
        store.erase();

    // Each result is read just before its first use (host ops in between
    // stay on the host); the buffers die with the call.
    Block *body = loop->getBlock();
    Operation *resume = loop->getNextNode();
    for (auto [result, buffer] : llvm::zip(loop.getResults(), finals)) {
      if (!buffer)
        continue;
      if (memref::LoadOp load = readBeforeFirstUse(result, buffer);
          load && load->isBeforeInBlock(resume))
        resume = load;
    }
    OpBuilder end(body->getTerminator());
    for (Value buffer : llvm::concat<Value>(partials, finals))
      if (buffer)
        memref::DeallocOp::create(end, loc, buffer);
    loop.erase();
    return resume;
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
  /// a whole-tensor reduction of that buffer (mapReduction), when the rows
  /// have at least kMinRowsReductionLength elements and the tensor at
  /// least kMinRowsReductionElements at run time; the reduction as it
  /// stands otherwise. A thread of mapReduction computes
  /// each element's position and address itself; over a row of contiguous
  /// elements a lane walks by vectors. Both forms are fixed trees that
  /// depend on the sizes alone: the same bits on every run, each its own.
  /// Returns the op to continue mapping from, or null, changing nothing,
  /// when `loop` is not such a reduction or its rows are not a row
  /// reduction.
  Operation *mapReductionByRows(scf::ParallelOp loop, func::FuncOp func) {
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
    mapReduction(overRows, func);

    // As it stands.
    OpBuilder eb = OpBuilder::atBlockTerminator(&choice.getElseRegion().front());
    auto whole = llvm::cast<scf::ParallelOp>(eb.clone(*loop));
    finish(eb, whole.getResult(0), Value());
    mapReduction(whole, func);

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
