//===- WholeReductionsByRows.cpp - a whole reduction as rows, then rows ---===//
//
// A whole-tensor reduction over two or more dimensions whose body is not a
// flat fold (a sum weighted by a vector of columns) may run as a row
// reduction into a buffer of a value a row, then as that buffer's whole
// reduction, when its rows are long enough at run time
// (mapWholeReductionByRows).
//
//===----------------------------------------------------------------------===//

#include "LoopMapping.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace nerve::loop_mapping {

namespace {

/// The loops of a whole reduction by rows (mapWholeReductionByRows).
struct RowsForm {
  scf::ParallelOp byRow;    ///< rows[k] folds row k
  scf::ParallelOp overRows; ///< the rows' values folded into one
  Value rows;               ///< the buffer of a value a row
};

/// By rows, at `tb`: rows[k] folds row k of `loop` (the outer positions,
/// row-major), then the rows' values fold into one.
RowsForm buildByRows(OpBuilder &tb, scf::ParallelOp loop) {
  Location loc = loop.getLoc();
  unsigned rank = loop.getNumLoops();
  auto reduce = llvm::cast<scf::ReduceOp>(loop.getBody()->getTerminator());
  Type type = loop.getResult(0).getType();
  ValueRange sizes = loop.getUpperBound();
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
  return {byRow, overRows, rows};
}

} // namespace

/// A whole-tensor reduction over two or more dimensions (one accumulator,
/// from 0 by 1, a body that only loads) as a row reduction over the
/// innermost dimension into a buffer of a value a row (mapRowReductions:
/// a warp or a block a row, 16-byte loads where the buffers allow), then
/// a whole-tensor reduction of that buffer (mapWholeReduction), when the rows
/// have at least minRowLength elements and the tensor at least
/// minRowsElements at run time (tuneWholeReduction); the reduction as it
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
Operation *mapWholeReductionByRows(scf::ParallelOp loop, int64_t blockSize) {
  unsigned rank = loop.getNumLoops();
  auto isConstant = [](ValueRange values, int64_t c) {
    return llvm::all_of(values, [&](Value v) { return getConstantIntValue(v) == c; });
  };
  if (loop.getNumResults() != 1 || rank < 2 || !isConstant(loop.getLowerBound(), 0) ||
      !isConstant(loop.getStep(), 1) || !loadsOnly(loop))
    return nullptr;
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

  OpBuilder tb = OpBuilder::atBlockTerminator(&choice.getThenRegion().front());
  RowsForm byRows = buildByRows(tb, loop);
  scf::ParallelOp byRow = byRows.byRow, overRows = byRows.overRows;
  Value rows = byRows.rows;
  finish(tb, overRows.getResult(0), rows);
  if (!mapRowReductions(byRow, blockSize)) {
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
  nerve::gpumap::WholeReductionTuning t = nerve::gpumap::tuneWholeReduction();
  Value longRows = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, sizes.back(),
                                         indexConstant(b, loc, t.minRowLength));
  Value manyElements = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, elements,
                                             indexConstant(b, loc, t.minRowsElements));
  Value wide = arith::AndIOp::create(b, loc, longRows, manyElements);
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

} // namespace nerve::loop_mapping
