//===- RowProgramPasses.cpp - a row program's passes over a row ----------===//
//
// Inside a row program's kernel (RowPrograms.cpp), the passes over one row:
// each statistic split over the block's threads and combined (in the
// block, or across a cluster's blocks), the elementwise pass reading the
// statistics, an input row staged in shared memory or, in the register
// form, kept in a thread's registers.
//
//===----------------------------------------------------------------------===//

#include "RowProgramBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace nerve::loop_mapping {

std::pair<Value, Value> RowProgramBuilder::window(OpBuilder &b, Value ub) {
  if (!columnBase)
    return {Value(), ub};
  Value end = arith::MinUIOp::create(
      b, loc, arith::AddIOp::create(b, loc, columnBase, sliceColumns), ub);
  return {columnBase, arith::MaxUIOp::create(b, loc, end, columnBase)};
}

Value RowProgramBuilder::stagedColumn(OpBuilder &b, Value j) {
  return columnBase ? arith::SubIOp::create(b, loc, j, columnBase).getResult() : j;
}

Value RowProgramBuilder::clusterTotal(OpBuilder &b, const LaneReduction &r, Value value) {
  Type type = value.getType();
  Value slot = workgroupArray(launch, type, 1, loc);
  Value zero = indexConstant(b, loc, 0);
  auto leader = scf::IfOp::create(b, loc, isBlockFirstThread, /*withElseRegion=*/false);
  {
    OpBuilder lb = OpBuilder::atBlockBegin(&leader.getThenRegion().front());
    memref::StoreOp::create(lb, loc, value, slot, ValueRange{zero});
  }
  NVVM::ClusterArriveOp::create(b, loc, b.getUnitAttr());
  NVVM::ClusterWaitOp::create(b, loc, b.getUnitAttr());
  auto shared = LLVM::LLVMPointerType::get(b.getContext(),
                                           static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared));
  auto cluster = LLVM::LLVMPointerType::get(
      b.getContext(), static_cast<unsigned>(NVVM::NVVMMemorySpace::SharedCluster));
  Value address = arith::IndexCastOp::create(
      b, loc, b.getI64Type(), memref::ExtractAlignedPointerAsIndexOp::create(b, loc, slot));
  Value local = LLVM::IntToPtrOp::create(b, loc, shared, address);
  auto slotOf = [&](OpBuilder &at, Value rank) -> Value {
    Value rank32 = arith::IndexCastOp::create(at, loc, at.getI32Type(), rank);
    Value remote = NVVM::MapaOp::create(at, loc, cluster, local, rank32);
    return LLVM::LoadOp::create(at, loc, type, remote);
  };
  Value one = indexConstant(b, loc, 1);
  auto fold = scf::ForOp::create(b, loc, one, clusterBlockCount, one,
                                 ValueRange{slotOf(b, zero)});
  {
    OpBuilder fb = OpBuilder::atBlockBegin(fold.getBody());
    scf::YieldOp::create(fb, loc,
                         combineAs(fb, r, fold.getRegionIterArgs()[0],
                                   slotOf(fb, fold.getInductionVar())));
  }
  return fold.getResult(0);
}

int64_t RowProgramBuilder::stagedBytesPerColumn() const {
  int64_t bytes = 0;
  for (Value m : g.staged)
    bytes += elementBytes(m);
  return bytes;
}

void RowProgramBuilder::setUpStaging(OpBuilder &b, Value start) {
  if (g.staged.empty())
    return;
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto bytesType = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                                   MemRefLayoutAttrInterface(), workgroup);
  Value raw = gpu::DynamicSharedMemoryOp::create(b, loc, bytesType);
  Value offset = start;
  for (Value m : g.staged) {
    Type element = llvm::cast<MemRefType>(m.getType()).getElementType();
    auto arrayType = MemRefType::get({ShapedType::kDynamic}, element,
                                     MemRefLayoutAttrInterface(), workgroup);
    stagingOf[m] = memref::ViewOp::create(b, loc, arrayType, raw, offset, ValueRange{capacity});
    offset = arith::AddIOp::create(
        b, loc, offset,
        arith::MulIOp::create(b, loc, capacity, indexConstant(b, loc, elementBytes(m))));
  }
}

void RowProgramBuilder::cloneOp(OpBuilder &b, Operation &op, IRMapping &m, ValueRange rowIvs,
                                Value col) {
  if (auto load = dyn_cast<memref::LoadOp>(op)) {
    Value memref = load.getMemref();
    if (g.buffers.contains(memref)) {
      m.map(load.getResult(), statistic.lookup(memref));
      return;
    }
    if (col && stagingOf.count(memref) && indexesRow(load.getIndices(), rowIvs, col)) {
      m.map(load.getResult(), stagedLoad(b, load, m, stagingOf[memref]));
      return;
    }
  }
  if (auto store = dyn_cast<memref::StoreOp>(op); store && g.buffers.contains(store.getMemref())) {
    statistic[store.getMemref()] = m.lookupOrDefault(store.getValue());
    auto once = scf::IfOp::create(b, loc, isFirstThread, /*withElseRegion=*/false);
    OpBuilder ob = OpBuilder::atBlockBegin(&once.getThenRegion().front());
    ob.clone(op, m);
    return;
  }
  b.clone(op, m);
}

Value RowProgramBuilder::stagedLoad(OpBuilder &b, memref::LoadOp load, IRMapping &m,
                                    Value staging) {
  Value j = m.lookupOrDefault(load.getIndices().back());
  Value at = stagedColumn(b, j);
  return stagedRead(
      b, load.getMemref(), load.getType(), j,
      [&](OpBuilder &ab) { return ab.clone(*load, m)->getResult(0); },
      [&](OpBuilder &ab) {
        return memref::LoadOp::create(ab, loc, staging, ValueRange{at}).getResult();
      },
      [&](OpBuilder &ab, Value v) {
        memref::StoreOp::create(ab, loc, v, staging, ValueRange{at});
      });
}

std::pair<Value, Value> RowProgramBuilder::registerVector(OpBuilder &b, Value ub, int64_t k) {
  if (k < static_cast<int64_t>(slots.size()))
    return slots[k];
  Value lanesValue = indexConstant(b, loc, lanes);
  Value vectors = arith::DivUIOp::create(b, loc, ub, lanesValue);
  Value v = arith::AddIOp::create(
      b, loc, tid, arith::MulIOp::create(b, loc, blockThreads, indexConstant(b, loc, k)));
  Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, v, vectors);
  Value last = arith::SubIOp::create(b, loc, vectors, indexConstant(b, loc, 1));
  Value at = arith::MinUIOp::create(b, loc, v, last);
  slots.push_back({arith::MulIOp::create(b, loc, at, lanesValue), valid});
  return slots.back();
}

Value RowProgramBuilder::scratch(Type type) {
  Value &s = scratchOf[type];
  if (!s)
    s = workgroupArray(launch, type, kWarpSize, loc);
  return s;
}

Value RowProgramBuilder::blockReduce(OpBuilder &b, const LaneReduction &r, IRMapping &m,
                                     ValueRange rowIvs) {
  Value lb = m.lookupOrDefault(r.loop.getLowerBound());
  Value ub = m.lookupOrDefault(r.loop.getUpperBound());
  Value step = m.lookupOrDefault(r.loop.getStep());
  bool columns =
      g.sameColumns(r.loop.getLowerBound(), r.loop.getUpperBound(), r.loop.getStep());
  Value col = r.loop.getInductionVar();
  Value partial;
  if (lanes > 1 && registers) {
    partial = registerPartial(b, r, m, rowIvs, ub);
  } else if (lanes > 1) {
    // The vector form (its columns start at 0 by 1: chooseLanes): each
    // iteration is a vector of columns, its lanes combined in order.
    auto [first, end] = window(b, ub);
    partial = vectorPartial(b, loc, r, m, first, end, tid, blockThreads, lanes,
                            kRowVectorsPerThread,
                            [&](OpBuilder &vb, MutableArrayRef<IRMapping> maps) {
                              for (Operation &op : r.loop.getBody()->without_terminator())
                                if (&op != r.combine)
                                  cloneLanes(vb, op, maps, rowIvs, col);
                            });
  } else {
    partial = stridedPartial(b, loc, r, lb, ub, step, tid, blockThreads,
                             [&](OpBuilder &vb, Value iv) {
                               IRMapping inner = m;
                               inner.map(col, iv);
                               for (Operation &op : r.loop.getBody()->without_terminator())
                                 if (&op != r.combine)
                                   cloneOp(vb, op, inner, rowIvs, columns ? col : Value());
                               return inner.lookupOrDefault(
                                   r.combine->getOperand(1 - r.accOperand));
                             },
                             t.elementsPerThread);
  }
  for (Value input : pendingStaged)
    stagedAlready.insert(input);
  pendingStaged.clear();
  if (warpRows)
    return combineAs(b, r, m.lookupOrDefault(r.loop.getInitArgs()[0]),
                     warpButterfly(b, loc, r, partial, groupLanes));
  partial = warpButterfly(b, loc, r, partial);
  Value warps = arith::DivUIOp::create(b, loc, blockThreads, indexConstant(b, loc, kWarpSize));
  Value result = blockCombine(b, loc, r, partial, scratch(partial.getType()), warp, isLaneZero,
                              warps);
  if (clusterBlockCount)
    result = clusterTotal(b, r, result);
  return combineAs(b, r, m.lookupOrDefault(r.loop.getInitArgs()[0]), result);
}

void RowProgramBuilder::buildStats(OpBuilder &b, scf::ParallelOp loop) {
  IRMapping m;
  m.map(ivsOf(loop), row);
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (auto it = g.reductions.find(&op); it != g.reductions.end())
      m.map(op.getResult(0), blockReduce(b, it->second, m, ivsOf(loop)));
    else
      cloneOp(b, op, m, ivsOf(loop), Value());
  }
}

void RowProgramBuilder::buildFinal(OpBuilder &b) {
  scf::ParallelOp loop = g.final;
  ValueRange ivs = ivsOf(loop);
  ValueRange rowIvs = ivs.take_front(g.rank);
  Value colIv = ivs.back();
  Value lb = loop.getLowerBound().back(), ub = loop.getUpperBound().back();
  Value step = loop.getStep().back();
  bool columns = g.sameColumns(lb, ub, step);
  Value zero = indexConstant(b, loc, 0), one = indexConstant(b, loc, 1);
  Value span = arith::SubIOp::create(b, loc, arith::MaxSIOp::create(b, loc, ub, lb), lb);
  Value threadStep = arith::MulIOp::create(b, loc, step, blockThreads);
  Value chunk = arith::MulIOp::create(b, loc, threadStep, indexConstant(b, loc, kRowUnroll));
  Value full = arith::DivUIOp::create(b, loc, span, chunk);
  Value offset = arith::AddIOp::create(b, loc, lb, arith::MulIOp::create(b, loc, tid, step));
  // Each unit of work is `lanes` consecutive columns from `start`.
  auto emit = [&](OpBuilder &eb, ArrayRef<Value> starts, ArrayRef<Value> valid = {}) {
    SmallVector<SmallVector<IRMapping>> units;
    for (Value start : starts) {
      IRMapping m;
      m.map(rowIvs, row);
      units.push_back(lanes > 1 ? laneMappings(eb, loc, m, colIv, start, lanes) : SmallVector<IRMapping>{m});
      if (lanes == 1)
        units.back().front().map(colIv, start);
    }
    for (Operation &op : loop.getBody()->without_terminator())
      for (auto [u, maps] : llvm::enumerate(units)) {
        if (!valid.empty()) { // the register form: unit u is slot u
          slot = static_cast<int64_t>(u);
          storeGuard = valid[u];
        }
        cloneLanes(eb, op, maps, rowIvs, columns ? colIv : Value());
      }
    slot = -1;
    storeGuard = Value();
  };
  if (lanes > 1 && registers) {
    SmallVector<Value> starts, valid;
    for (int64_t k = 0; k < kRowVectorsPerThread; ++k) {
      auto [first, inRow] = registerVector(b, ub, k);
      starts.push_back(first);
      valid.push_back(inRow);
    }
    emit(b, starts, valid);
    return;
  }
  if (lanes > 1) {
    // The vector form: columns from 0 by 1 (chooseLanes), a whole number
    // of vectors; thread t takes vectors t, t + T, ... (of its block's
    // slice in the cluster form), two at a time.
    Value lanesValue = indexConstant(b, loc, lanes);
    auto [firstColumn, endColumn] = window(b, ub);
    Value firstVector =
        firstColumn ? arith::DivUIOp::create(b, loc, firstColumn, lanesValue).getResult() : zero;
    Value vectors = arith::DivUIOp::create(b, loc, endColumn, lanesValue);
    Value pair = arith::MulIOp::create(b, loc, blockThreads, indexConstant(b, loc, 2));
    Value pairs = oneVectorAStep
                      ? zero
                      : arith::DivUIOp::create(
                            b, loc, arith::SubIOp::create(b, loc, vectors, firstVector), pair)
                            .getResult();
    Value start = arith::AddIOp::create(b, loc, firstVector, tid);
    auto main = scf::ForOp::create(b, loc, zero, pairs, one);
    {
      OpBuilder mb = OpBuilder::atBlockBegin(main.getBody());
      Value v0 = arith::AddIOp::create(
          mb, loc, start, arith::MulIOp::create(mb, loc, main.getInductionVar(), pair));
      Value v1 = arith::AddIOp::create(mb, loc, v0, blockThreads);
      emit(mb, {arith::MulIOp::create(mb, loc, v0, lanesValue).getResult(),
                arith::MulIOp::create(mb, loc, v1, lanesValue).getResult()});
    }
    Value rest =
        arith::AddIOp::create(b, loc, start, arith::MulIOp::create(b, loc, pairs, pair));
    auto tail = scf::ForOp::create(b, loc, rest, vectors, blockThreads);
    {
      OpBuilder tb = OpBuilder::atBlockBegin(tail.getBody());
      emit(tb, {arith::MulIOp::create(tb, loc, tail.getInductionVar(), lanesValue).getResult()});
    }
    return;
  }
  auto main = scf::ForOp::create(b, loc, zero, full, one);
  {
    OpBuilder mb = OpBuilder::atBlockBegin(main.getBody());
    Value base = arith::AddIOp::create(
        mb, loc, offset, arith::MulIOp::create(mb, loc, main.getInductionVar(), chunk));
    SmallVector<Value> cols = {base};
    for (int64_t u = 1; u < kRowUnroll; ++u)
      cols.push_back(arith::AddIOp::create(
          mb, loc, base, arith::MulIOp::create(mb, loc, threadStep, indexConstant(mb, loc, u))));
    emit(mb, cols);
  }
  Value tailStart =
      arith::AddIOp::create(b, loc, offset, arith::MulIOp::create(b, loc, full, chunk));
  auto tail = scf::ForOp::create(b, loc, tailStart, ub, threadStep);
  {
    OpBuilder tb = OpBuilder::atBlockBegin(tail.getBody());
    emit(tb, {tail.getInductionVar()});
  }
}

} // namespace nerve::loop_mapping
