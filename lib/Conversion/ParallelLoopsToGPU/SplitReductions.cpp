//===- SplitReductions.cpp - reductions along an outer dimension, split --===//
//
// A column sum lowers to a parallel loop over columns whose body folds a
// sequential loop over rows. A thread per column is coalesced (neighbours
// read neighbours) but a matrix of 65536 x 1024 then has 1024 threads for
// the whole GPU: 2% of the copy bandwidth on an H200. Here the rows are
// split into K chunks so that about 256K threads run: kernel 1 has thread
// (k, column) fold chunk k of its column into a partial value (four at a
// time, four loads in flight); kernel 2 has a thread per column combine the
// K partials in order, then run the rest of the body. The chunking depends
// only on the sizes: the same bits on every run.
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

/// Threads the split aims for: enough to cover an H100/H200 (132 SMs x 2048).
constexpr int64_t kTargetThreads = 132 * 2048;
/// Rows a chunk keeps at least (fewer would make kernel 2 the larger one).
constexpr int64_t kMinChunk = 64;

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
  // K chunks: enough threads, chunks of at least kMinChunk rows.
  Value chunks = arith::CeilDivUIOp::create(b, loc, indexConstant(b, loc, kTargetThreads),
                                            arith::MaxUIOp::create(b, loc, total, one));
  chunks = arith::MinUIOp::create(
      b, loc, chunks,
      arith::CeilDivUIOp::create(b, loc, rows, indexConstant(b, loc, kMinChunk)));
  chunks = arith::MaxUIOp::create(b, loc, chunks, one);
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

  // Kernel 1: thread (k, column), the column fastest (coalesced).
  forEach(arith::MulIOp::create(b, loc, chunks, total), [&](OpBuilder &ib, Value item) {
    Value k = arith::DivUIOp::create(ib, loc, item, total);
    Value column = arith::SubIOp::create(ib, loc, item, arith::MulIOp::create(ib, loc, k, total));
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
    memref::StoreOp::create(ib, loc, partial, partials, ValueRange{item});
  });

  // Kernel 2: a thread per column combines the chunks in order, then runs
  // the rest of the body with the result.
  forEach(total, [&](OpBuilder &ib, Value column) {
    IRMapping m;
    m.map(loop.getInductionVars(), delinearize(ib, loc, loop, counts, column));
    cloneBefore(ib, m);
    auto combineChunks = scf::ForOp::create(ib, loc, indexConstant(ib, loc, 0), chunks, one,
                                            ValueRange{m.lookupOrDefault(fold.getInitArgs()[0])});
    {
      OpBuilder cb = OpBuilder::atBlockBegin(combineChunks.getBody());
      Value at = arith::AddIOp::create(
          cb, loc, arith::MulIOp::create(cb, loc, combineChunks.getInductionVar(), total), column);
      Value v = memref::LoadOp::create(cb, loc, partials, ValueRange{at});
      scf::YieldOp::create(cb, loc, combineAs(cb, *r, combineChunks.getRegionIterArgs()[0], v));
    }
    m.map(fold.getResult(0), combineChunks.getResult(0));
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
