//===- SplitReductions.cpp - reductions along an outer dimension, split --===//
//
// A column sum lowers to a parallel loop over columns whose body folds a
// sequential loop over rows. A thread per column is coalesced (neighbours
// read neighbours) but a matrix of 65536 x 1024 then has 1024 threads for
// the whole GPU: 2% of the copy bandwidth on an H200. Here the rows are
// split into K chunks so that at most 270K threads run (one wave on an
// H100/H200): kernel 1 has thread
// (k, column) fold chunk k of its column into a partial value (four at a
// time, four loads in flight; a 2-D grid, blocks of columns by chunks);
// kernel 2 has a thread per column combine the K partials (eight at a
// time, in a fixed order), then run the rest of the body. The chunking
// depends only on the sizes: the same bits on every run.
//
//===----------------------------------------------------------------------===//

#include "LoopMapping.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace nerve::loop_mapping;

namespace {

/// Threads the split aims for: what an H100/H200 holds at once (132 SMs x
/// 2048; kernel 1 takes 32 registers, so 2048 threads fit an SM).
constexpr int64_t kTargetThreads = 132 * 2048;
/// Rows a chunk keeps at least (fewer would make kernel 2 the larger one).
constexpr int64_t kMinChunk = 64;
/// The most blocks along a grid's y dimension.
constexpr int64_t kMaxGridY = 65535;
/// Partials kernel 2 reads at a time per column.
constexpr int64_t kCombineInFlight = 8;

} // namespace

bool nerve::loop_mapping::mapSplitReduction(scf::ParallelOp loop, int64_t blockSize) {
  if (loop.getNumResults() != 0)
    return false;
  scf::ForOp fold;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (auto inner = dyn_cast<scf::ForOp>(op)) {
      if (fold)
        return false;
      fold = inner;
      continue;
    }
    if (op.getNumRegions() != 0 ||
        !(isa<memref::LoadOp, memref::StoreOp>(op) || isMemoryEffectFree(&op)))
      return false;
    // Writes come after the fold (kernel 2 runs them once per column).
    if (isa<memref::StoreOp>(op) && !fold)
      return false;
  }
  if (!fold)
    return false;
  std::optional<LaneReduction> r = matchFold(fold);
  if (!r)
    return false;
  auto lbConst = getConstantIntValue(fold.getLowerBound());
  auto ubConst = getConstantIntValue(fold.getUpperBound());
  if (lbConst && ubConst && (*ubConst - *lbConst) / *getConstantIntValue(fold.getStep()) <
                                kMinStaticTrip)
    return false;

  Location loc = loop.getLoc();
  OpBuilder b(loop);
  IRMapping hosted;
  Value lb = hoistOutOf(b, fold.getLowerBound(), loop, hosted);
  Value ub = hoistOutOf(b, fold.getUpperBound(), loop, hosted);
  Value rows = hostTripCount(b, fold, loop, hosted);
  Value step = fold.getStep();
  if (!rows)
    return false;
  SmallVector<Value> counts;
  Value total;
  std::tie(counts, total) = tripCounts(b, loop);
  Value one = indexConstant(b, loc, 1);
  // K chunks: as many threads as fit the GPU at once, not more (rounded
  // down: 5 chunks of 65536 columns made 1.2 waves on an H200, and the few
  // blocks of the second, each with little in flight, took longer than the
  // first: 65% of the copy bandwidth against 99% at 4 chunks), chunks of
  // at least kMinChunk rows.
  Value chunks = arith::DivUIOp::create(b, loc, indexConstant(b, loc, kTargetThreads),
                                        arith::MaxUIOp::create(b, loc, total, one));
  chunks = arith::MinUIOp::create(
      b, loc, chunks,
      arith::CeilDivUIOp::create(b, loc, rows, indexConstant(b, loc, kMinChunk)));
  chunks = arith::MaxUIOp::create(b, loc, chunks, one);
  // Kernel 1's grid has a row of blocks per chunk (at most 65535).
  chunks = arith::MinUIOp::create(b, loc, chunks, indexConstant(b, loc, kMaxGridY));
  Value perChunk = arith::CeilDivUIOp::create(b, loc, rows, chunks);
  Type accType = fold.getResult(0).getType();
  Value partials = memref::AllocOp::create(
      b, loc, MemRefType::get({ShapedType::kDynamic}, accType),
      ValueRange{arith::MulIOp::create(b, loc, chunks, total)});
  Value block = indexConstant(b, loc, blockSize);

  // What the body computes before the fold (sizes, values per column).
  auto cloneBefore = [&](OpBuilder &ib, IRMapping &m) {
    for (Operation &op : loop.getBody()->without_terminator()) {
      if (&op == fold.getOperation())
        break;
      ib.clone(op, m);
    }
  };
  auto forEach = [&](Value work, function_ref<void(OpBuilder &, Value)> body) {
    buildLaunchOver(b, loc, work, block, block, [&](OpBuilder &ib, gpu::LaunchOp launch) {
      Value first = arith::AddIOp::create(
          ib, loc, arith::MulIOp::create(ib, loc, launch.getBlockIds().x, block),
          launch.getThreadIds().x);
      Value stride = arith::MulIOp::create(ib, loc, launch.getGridSize().x, block);
      auto strided = scf::ForOp::create(ib, loc, first, work, stride);
      OpBuilder sb = OpBuilder::atBlockBegin(strided.getBody());
      body(sb, strided.getInductionVar());
    });
  };

  // Kernel 1: block row k folds chunk k; x of the grid and the threads walk
  // the columns (coalesced). Two grid dimensions, so no division of a flat
  // index: 64-bit division took kernel 1 to 40 registers, 1536 threads an
  // SM, and its 270K threads to 1.33 waves on an H200.
  {
    Value work = arith::MulIOp::create(b, loc, chunks, total);
    Value nonEmpty = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, work,
                                           indexConstant(b, loc, 0));
    auto ifWork = scf::IfOp::create(b, loc, nonEmpty, /*withElseRegion=*/false);
    OpBuilder ob = OpBuilder::atBlockBegin(&ifWork.getThenRegion().front());
    Value columnBlocks = arith::CeilDivUIOp::create(ob, loc, total, block);
    auto launch = gpu::LaunchOp::create(ob, loc, columnBlocks, chunks, one, block, one, one);
    OpBuilder ib = OpBuilder::atBlockBegin(&launch.getBody().front());
    Value column = arith::AddIOp::create(
        ib, loc, arith::MulIOp::create(ib, loc, launch.getBlockIds().x, block),
        launch.getThreadIds().x);
    Value k = launch.getBlockIds().y;
    Value inside =
        arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::ult, column, total);
    auto ifInside = scf::IfOp::create(ib, loc, inside, /*withElseRegion=*/false);
    gpu::TerminatorOp::create(ib, loc);
    ib.setInsertionPointToStart(&ifInside.getThenRegion().front());
    IRMapping m;
    m.map(loop.getInductionVars(), delinearize(ib, loc, loop, counts, column));
    cloneBefore(ib, m);
    Value span = arith::MulIOp::create(ib, loc, perChunk, step);
    Value start = arith::AddIOp::create(ib, loc, lb, arith::MulIOp::create(ib, loc, k, span));
    Value end = arith::MinSIOp::create(ib, loc, arith::AddIOp::create(ib, loc, start, span), ub);
    Value partial = stridedPartial(ib, loc, *r, start, end, step, indexConstant(ib, loc, 0), one,
                                   [&](OpBuilder &vb, Value iv) {
                                     IRMapping inner = m;
                                     inner.map(fold.getInductionVar(), iv);
                                     for (Operation &op : fold.getBody()->without_terminator())
                                       if (&op != r->combine)
                                         vb.clone(op, inner);
                                     return inner.lookupOrDefault(
                                         r->combine->getOperand(1 - r->accOperand));
                                   });
    Value item = arith::AddIOp::create(ib, loc, arith::MulIOp::create(ib, loc, k, total), column);
    memref::StoreOp::create(ib, loc, partial, partials, ValueRange{item});
  }

  // Kernel 2: a thread per column combines its chunks' partials, then runs
  // the rest of the body with the result. The partials are read eight at a
  // time into as many running values (a fixed order): one after another,
  // the L2 latency of each read made this kernel as long as kernel 1 for
  // tall matrices (264 chunks of a 65536 x 1024 column sum).
  forEach(total, [&](OpBuilder &ib, Value column) {
    IRMapping m;
    m.map(loop.getInductionVars(), delinearize(ib, loc, loop, counts, column));
    cloneBefore(ib, m);
    Value zero = indexConstant(ib, loc, 0);
    Value combined = stridedPartial(
        ib, loc, *r, zero, chunks, one, zero, one,
        [&](OpBuilder &vb, Value chunk) -> Value {
          Value at = arith::AddIOp::create(vb, loc, arith::MulIOp::create(vb, loc, chunk, total),
                                           column);
          return memref::LoadOp::create(vb, loc, partials, ValueRange{at});
        },
        kCombineInFlight);
    m.map(fold.getResult(0),
          combineAs(ib, *r, m.lookupOrDefault(fold.getInitArgs()[0]), combined));
    bool after = false;
    for (Operation &op : loop.getBody()->without_terminator()) {
      if (after)
        ib.clone(op, m);
      after |= &op == fold.getOperation();
    }
  });

  auto func = loop->getParentOfType<func::FuncOp>();
  OpBuilder end(func.front().getTerminator());
  memref::DeallocOp::create(end, loc, partials);
  loop.erase();
  return true;
}
