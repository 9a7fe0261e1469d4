//===- ParallelLoopsToGPU.cpp - parallel loops onto GPU threads ---------===//
//
// The pass's driver: each top-level loop of a kernel function is mapped
// onto launches by the #gpumap.strategy nerve-gpu-select-strategy wrote on
// it (row programs, row, split and whole reductions, transposed staging,
// tiled transposes, or threads over the iterations, by vectors or in
// lockstep; each in a file of its own, declared in LoopMapping.h); what
// stays sequential runs in one thread, and the kernel's own buffers move
// to the device.
//
//===----------------------------------------------------------------------===//

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

namespace gpumap = nerve::gpumap;


namespace nerve {
#define GEN_PASS_DEF_PARALLELLOOPSTOGPU
#include "nerve/Conversion/Passes.h.inc"
} // namespace nerve

using namespace mlir;
using namespace nerve::loop_mapping;

/// loads, stores and pure ops, nothing with regions.
static bool isStraightLine(Block *body) {
  return llvm::all_of(body->without_terminator(), [](Operation &op) {
    return op.getNumRegions() == 0 &&
           (isa<memref::LoadOp, memref::StoreOp>(op) || isMemoryEffectFree(&op));
  });
}

namespace {

struct ParallelLoopsToGPUPass
    : nerve::impl::ParallelLoopsToGPUBase<ParallelLoopsToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<func::FuncOp>()) {
      if (!func->hasAttr("nerve.kernel") || func.isExternal())
        continue;
      if (failed(mapFunction(func)))
        return signalPassFailure();
    }
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
        if (failed(flush()) || failed(applyStrategy(loop, next)))
          return failure();
      } else if (auto fold = dyn_cast<nerve::fold::ForOp>(op); fold && gpumap::strategyOf(fold)) {
        if (usesDeviceValue || !foldsAsWhole(fold))
          return fold.emitOpError("does not fold as a whole at the kernel's top level "
                                  "(strategy 'whole_fold')");
        if (failed(flush()))
          return failure();
        next = mapWholeFold(fold, gpumap::strategyOf(fold).getBlock()); // at its results' loads
      } else if (isa<gpumap::TiledContractOp>(op) ||
                 (staysOnHost(&op) && !usesDeviceValue)) {
        // A tiled contraction is a launch of its own, which
        // nerve-convert-gpumap-to-gpu builds.
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

  /// Maps `loop` by its #gpumap.strategy; `next` becomes the op to go on
  /// from where the mapping says (after the loops a row program took in,
  /// at a reduction's result).
  LogicalResult applyStrategy(scf::ParallelOp loop, Operation *&next) {
    gpumap::StrategyAttr strategy = gpumap::strategyOf(loop);
    if (!strategy)
      return loop.emitOpError("has no #gpumap.strategy (nerve-gpu-select-strategy chooses one)");
    gpumap::StrategyKind kind = strategy.getKind();
    int64_t block = strategy.getBlock();
    auto notTaken = [&]() -> LogicalResult {
      return loop.emitOpError() << "does not have the shape strategy '"
                                << gpumap::stringifyStrategyKind(kind) << "' maps";
    };
    switch (kind) {
    case gpumap::StrategyKind::whole_reduction: {
      // By rows where its iterations do not fold as one vector.
      Operation *resume = foldsFlat(loop) ? nullptr : mapWholeReductionByRows(loop, block);
      next = resume ? resume : mapWholeReduction(loop, block); // at its results' loads
      return success();
    }
    case gpumap::StrategyKind::row_program: {
      auto loops = static_cast<unsigned>(strategy.getLoops());
      Operation *resume = mapRowProgram(loop, loops,
                                        {strategy.getStaging(), strategy.getCluster()},
                                        [&](scf::ParallelOp alone, int64_t minColumns) {
                                          if (!mapRowReductions(alone, block, minColumns))
                                            mapParallel(alone, block, std::nullopt, minColumns);
                                        });
      if (!resume)
        return notTaken();
      next = resume; // after the loops the program took in
      return success();
    }
    case gpumap::StrategyKind::row_reductions:
      return mapRowReductions(loop, block) ? success() : notTaken();
    case gpumap::StrategyKind::split_reduction:
      return mapSplitReduction(loop) ? success() : notTaken();
    case gpumap::StrategyKind::transposed_staging:
      return mapTransposedStaging(collapseNested(loop), block) ? success() : notTaken();
    case gpumap::StrategyKind::tiled_transpose: {
      FailureOr<scf::ParallelOp> tiled = mapTiledTranspose(collapseNested(loop));
      if (failed(tiled))
        return notTaken();
      if (*tiled) // the shapes the tiles do not suit
        mapParallel(*tiled, block, std::nullopt);
      return success();
    }
    case gpumap::StrategyKind::threads:
      return mapParallel(loop, block, strategy.getLanes()) ? success() : notTaken();
    case gpumap::StrategyKind::whole_fold:
      break;
    }
    return notTaken();
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

  /// `minColumns`: what the caller knows the innermost dimension's
  /// iterations to be at least (half a tile or more: only the tiled mapping
  /// is built).
  /// `blockSize`: the most threads a block has.
  /// `lanes`: iterations a thread takes as one vector (a threads
  /// strategy's), 0 for elements, none for what the body suits (a loop
  /// another strategy leaves to this one); false, changing nothing, when
  /// the body does not take that many.
  bool mapParallel(scf::ParallelOp loop, int64_t blockSize, std::optional<int64_t> wanted,
                   int64_t minColumns = 0) {
    loop = collapseNested(loop);
    int64_t suited = vectorLanesFor(loop);
    int64_t lanes = wanted.value_or(suited);
    if (lanes != 0 && suited != lanes)
      return false;
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
    if (lanes == 0 || !mapVectorLanes(b, loop, counts, total, threads,
                                      std::max<int64_t>(perThread / 2, 1), scalarMapping))
      scalarMapping(b);
    loop.erase();
    return true;
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
