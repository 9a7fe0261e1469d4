//===- WholeReductionFlat.cpp - N-D whole reductions as one flat vector --===//
//
// A whole reduction over two or more dimensions whose indices serve only as
// the whole index of its loads folds its iterations in row-major order, by
// chunks of a vector (WholeReductions.cpp's tree around it): by vector
// loads of flat views where the buffers are dense and aligned, else lane by
// lane, a digit a dimension; the same values in the same order either way.
//
//===----------------------------------------------------------------------===//

#include "WholeReduction.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace nerve::loop_mapping::whole {

std::optional<FlatLoads> flatLoadsOf(const WholeReduction &w) {
  scf::ParallelOp loop = w.parallel;
  auto isConstant = [](ValueRange values, int64_t c) {
    return llvm::all_of(values, [&](Value v) { return getConstantIntValue(v) == c; });
  };
  if (!loop || loop.getNumLoops() < 2 || !isConstant(loop.getLowerBound(), 0) ||
      !isConstant(loop.getStep(), 1) ||
      llvm::any_of(loop.getBody()->without_terminator(),
                   [](Operation &op) { return op.getNumRegions() != 0; }))
    return std::nullopt;
  SmallVector<Value> ivs(loop.getInductionVars());
  FlatLoads flat;
  for (Value iv : ivs)
    for (Operation *user : iv.getUsers()) {
      auto load = dyn_cast<memref::LoadOp>(user);
      if (!load || !llvm::equal(load.getIndices(), ivs))
        return std::nullopt;
      if (Operation *def = load.getMemRef().getDefiningOp(); def && loop->isAncestor(def))
        return std::nullopt;
      if (llvm::is_contained(flat.loads, load))
        continue;
      Type element = load.getMemRefType().getElementType();
      unsigned bits = element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 0;
      if (bits == 0 || bits % 8 != 0 || bits > 64)
        return std::nullopt;
      flat.loads.push_back(load);
      if (!llvm::is_contained(flat.buffers, load.getMemRef()))
        flat.buffers.push_back(load.getMemRef());
      flat.lanes = std::max<int64_t>(flat.lanes, 128 / bits);
    }
  if (flat.loads.empty())
    return std::nullopt;
  flat.lanes = std::min(flat.lanes, kMaxVectorLanes);
  return flat;
}

/// Whether every buffer of `flat` holds the iterations in row-major order
/// without gaps (innermost stride 1, each other stride the product of the
/// counts inside it) from an address aligned to 16 bytes: the vector form
/// of foldFlatChunksAhead, reading flat views, applies.
Value flatVectorsFit(OpBuilder &b, Location loc, const FlatLoads &flat, ArrayRef<Value> counts) {
  Value one = indexConstant(b, loc, 1);
  Value ok = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
  auto both = [&](Value x, Value y) { return arith::AndIOp::create(b, loc, x, y).getResult(); };
  auto equal = [&](Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y).getResult();
  };
  for (Value buffer : flat.buffers) {
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
    ValueRange strides = meta.getStrides();
    Value dense = one;
    for (size_t d = strides.size(); d-- > 0;) {
      ok = both(ok, equal(strides[d], dense));
      if (d > 0)
        dense = arith::MulIOp::create(b, loc, dense, counts[d]);
    }
    ok = both(ok, startsAligned(b, loc, buffer, meta.getOffset(), 16));
  }
  return ok;
}

/// One-dimensional views of `flat`'s buffers over `total` elements, for
/// buffers flatVectorsFit found dense.
SmallVector<Value> flatViews(OpBuilder &b, Location loc, const FlatLoads &flat, Value total) {
  return llvm::map_to_vector(flat.buffers, [&](Value buffer) -> Value {
    auto type = cast<MemRefType>(buffer.getType());
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
    auto viewType = MemRefType::get(
        {ShapedType::kDynamic}, type.getElementType(),
        StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, {1}), type.getMemorySpace());
    OpFoldResult offset = meta.getOffset(), size = total, unit = b.getIndexAttr(1);
    return memref::ReinterpretCastOp::create(b, loc, viewType, buffer, offset, {size}, {unit});
  });
}

/// An N-D reduction of flat loads (flatLoadsOf) folded by chunks of its
/// iterations in row-major order, as foldChunksAhead folds a vector's: the
/// thread `first` of `stride` takes the whole chunks first, first +
/// stride, ..., the tuning's chunksAhead a round, their loads first, each
/// chunk's lanes in order; then thread 0 the iterations after the last whole
/// chunk. With `views` (flatViews), a chunk's loads are one vector load of
/// each view; without, each lane loads at its position, a digit a
/// dimension: the chunk's, advanced by `chunkStrideDigits` (the digits of
/// stride x lanes) a chunk, plus `laneDigits[k]` (those of k) for lane k.
/// Both forms fold the same values in the same order: the same bits,
/// whatever the buffers' strides and alignment.
SmallVector<Value> foldFlatChunksAhead(OpBuilder &b, Location loc, const WholeReduction &w,
                                       const FlatLoads &flat, ArrayRef<Value> counts, Value total,
                                       Value first, Value stride, ArrayRef<Value> views,
                                       ArrayRef<Value> chunkStrideDigits,
                                       ArrayRef<SmallVector<Value>> laneDigits) {
  int64_t lanes = flat.lanes;
  size_t rank = counts.size();
  bool byVectors = !views.empty();
  Value lanesValue = indexConstant(b, loc, lanes);
  Value chunks = arith::DivUIOp::create(b, loc, total, lanesValue);
  Block *body = w.body();
  auto isFlatLoad = [&](Operation &op) {
    auto load = dyn_cast<memref::LoadOp>(op);
    return load && llvm::is_contained(flat.loads, load);
  };
  // The values lane by lane, from `maps` (the loads' results mapped by the
  // vector form, the induction variables by the scalar one).
  auto laneValues = [&](OpBuilder &lb, MutableArrayRef<IRMapping> maps) {
    SmallVector<SmallVector<Value>> values;
    for (IRMapping &m : maps) {
      for (Operation &op : body->without_terminator())
        if (!byVectors || !isFlatLoad(op))
          lb.clone(op, m);
      values.push_back(mapped(m, body->getTerminator()->getOperands()));
    }
    return values;
  };
  SmallVector<Value> inits;
  if (!byVectors)
    inits = digitsOf(b, loc, counts, arith::MulIOp::create(b, loc, first, lanesValue));
  llvm::append_range(inits, w.inits());
  Value roundStride =
      arith::MulIOp::create(b, loc, stride, indexConstant(b, loc, tuning().chunksAhead));
  auto rounds = scf::ForOp::create(b, loc, first, chunks, roundStride, inits);
  size_t carriedDigits = byVectors ? 0 : rank;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(rounds.getBody());
    ValueRange carried = rounds.getRegionIterArgs();
    SmallVector<Value> roundStart(carried.take_front(carriedDigits)), at = roundStart;
    Value roundFirst = rounds.getInductionVar(), chunkAt = roundFirst;
    SmallVector<Value> present;
    SmallVector<SmallVector<SmallVector<Value>>> values;
    for (int64_t k = 0, n = tuning().chunksAhead; k < n; ++k) {
      Value chunk = roundFirst;
      SmallVector<Value> position = at;
      if (k > 0) {
        chunkAt = arith::AddIOp::create(b, loc, chunkAt, stride);
        Value in = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, chunkAt, chunks);
        present.push_back(in);
        chunk = arith::SelectOp::create(b, loc, in, chunkAt, roundFirst);
        for (auto [p, safe] : llvm::zip(position, roundStart))
          p = arith::SelectOp::create(b, loc, in, p, safe);
      }
      SmallVector<IRMapping> maps(lanes);
      if (byVectors) {
        Value flatIndex = arith::MulIOp::create(b, loc, chunk, lanesValue);
        for (memref::LoadOp load : flat.loads) {
          Value view = views[llvm::find(flat.buffers, load.getMemRef()) - flat.buffers.begin()];
          unpackLanes(b, loc, vectorLoad(b, loc, view, ValueRange{flatIndex}, lanes),
                      load.getResult(), maps);
        }
      } else {
        for (int64_t j = 0; j < lanes; ++j)
          maps[j].map(w.ivs,
                      j == 0 ? position : addDigits(b, loc, counts, position, laneDigits[j]));
        at = addDigits(b, loc, counts, at, chunkStrideDigits);
      }
      values.push_back(laneValues(b, maps));
    }
    SmallVector<Value> yielded = at;
    llvm::append_range(yielded,
                       foldRound(b, loc, w, SmallVector<Value>(carried.drop_front(carriedDigits)),
                                 values, present));
    scf::YieldOp::create(b, loc, yielded);
  }
  return foldRest(b, loc, w, counts, chunks, lanesValue, total, first,
                  rounds.getResults().drop_front(carriedDigits));
}

} // namespace nerve::loop_mapping::whole
