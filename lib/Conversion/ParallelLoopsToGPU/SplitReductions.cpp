//===- SplitReductions.cpp - reductions along an outer dimension, split --===//
//
// A column sum lowers to a parallel loop over columns whose body folds a
// sequential loop over rows. A thread per column is coalesced (neighbours
// read neighbours) but a matrix of 65536 x 1024 then has 1024 threads for
// the whole GPU: 2% of the copy bandwidth on an H200. Here the rows are
// split into K chunks so that enough loads are in flight: kernel 1 has
// thread (k, columns) fold chunk k of its columns into partial values: it
// issues the loads of eight rows, then folds them in order into one partial
// per column (a partial per row in flight cost too many registers; see
// docs/decisions.md). A block's eight warps take eight consecutive chunks
// of the same columns and merge them in order through shared memory, so
// one partial per group of eight chunks and column leaves the kernel. When
// a host check finds the buffers aligned, a thread takes a 16-byte vector
// of neighbouring columns (4 f32, 8 f16) and folds them side by side, each
// in the order a thread of one column would (the scalar form, run
// otherwise): the same bits either way. Kernel 2 has blocks of S slices x
// 256 / S columns, S = 32 for many groups and 4 for few (two launches, one
// run): slice s of a column combines groups s, s + S, ... (their loads in
// flight together), then the column's first slice combines the slices in
// order, through shared memory, and runs the rest of the body. The
// chunking and S depend only on the sizes: the same bits on every run. A
// fold of several accumulators that states its merge (a fold.for: an
// online softmax's maximum and sum, an argmax; see LaneReduction) folds its
// chunks with its own step and merges them with its merge region, a partial
// buffer and a shared array per accumulator.
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

/// The launches' sizes come from the split reduction's heuristics
/// (nerve/Dialect/GPUMap/Heuristics/SplitReduction.h), over the fold's
/// vector lanes.
using nerve::gpumap::SplitReductionTuning;

} // namespace

/// The fold of a loop that splitsAsReduction, matched; nullopt otherwise.
static std::optional<LaneReduction> splitFold(scf::ParallelOp loop) {
  if (loop.getNumResults() != 0)
    return std::nullopt;
  FoldLoop fold;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (FoldLoop inner = FoldLoop::dynCast(&op)) {
      if (fold)
        return std::nullopt;
      fold = inner;
      continue;
    }
    if (op.getNumRegions() != 0 ||
        !(isa<memref::LoadOp, memref::StoreOp>(op) || isMemoryEffectFree(&op)))
      return std::nullopt;
    // Writes come after the fold (kernel 2 runs them once per column).
    if (isa<memref::StoreOp>(op) && !fold)
      return std::nullopt;
  }
  if (!fold)
    return std::nullopt;
  std::optional<LaneReduction> r = matchFold(fold);
  if (!r)
    return std::nullopt;
  auto lbConst = getConstantIntValue(fold.getLowerBound());
  auto ubConst = getConstantIntValue(fold.getUpperBound());
  if (lbConst && ubConst && (*ubConst - *lbConst) / *getConstantIntValue(fold.getStep()) <
                                kMinStaticTrip)
    return std::nullopt;
  return r;
}

bool nerve::loop_mapping::splitsAsReduction(scf::ParallelOp loop) {
  return splitFold(loop).has_value();
}

bool nerve::loop_mapping::mapsAsSplitReduction(scf::ParallelOp loop) {
  std::optional<LaneReduction> r = splitFold(loop);
  return r && tripCountHoistable(r->loop, loop);
}

namespace {

/// Builds the two launches of one split reduction (the file's header).
class SplitReductionBuilder {
public:
  SplitReductionBuilder(scf::ParallelOp loop, LaneReduction r)
      : loop(loop), r(std::move(r)), fold(this->r.loop), loc(loop.getLoc()),
        rank(loop.getNumLoops()), column0(loop.getInductionVars()[rank - 1]) {}

  bool build() {
    findVectorLoads();
    OpBuilder b(loop);
    IRMapping hosted;
    lb = hoistOutOf(b, fold.getLowerBound(), loop, hosted);
    ub = hoistOutOf(b, fold.getUpperBound(), loop, hosted);
    rows = hostTripCount(b, fold, loop, hosted);
    step = fold.getStep();
    if (!rows)
      return false;
    sizeChunks(b);
    makeVectorViews(b);
    Value fits;
    if (vectorLanes > 1) {
      SmallVector<Value> buffers;
      for (Value view : vectorViews)
        if (!llvm::is_contained(buffers, view))
          buffers.push_back(view);
      fits = vectorAccessesFit(b, loc, buffers, vectorLanes, counts.back(),
                               loop.getLowerBound()[rank - 1]);
    }
    buildVectorsIfFit(b, loc, fits, vectorLanes,
                      [&](OpBuilder &hb, int64_t lanes) { buildPartials(hb, lanes); });
    buildCombines(b);
    auto func = loop->getParentOfType<func::FuncOp>();
    OpBuilder end(func.front().getTerminator());
    for (Value buffer : partials)
      memref::DeallocOp::create(end, loc, buffer);
    loop.erase();
    return true;
  }

private:
  scf::ParallelOp loop;
  LaneReduction r;
  FoldLoop fold;
  Location loc;
  unsigned rank;
  Value column0; ///< the loop's innermost index: neighbouring columns
  SmallVector<memref::LoadOp> vectorLoads;
  SmallVector<int> swapWithLast; ///< per vector load: the dimension made last, or -1
  SmallVector<Value> vectorViews; ///< per vector load: its buffer or transposed view
  int64_t vectorLanes = 1;
  SplitReductionTuning t; ///< the launches' sizes (sizeChunks)
  Value lb, ub, rows, step;       ///< the fold's bounds and rows, on the host
  SmallVector<Value> counts;      ///< the loop's trip counts
  Value total, one;               ///< columns; 1
  Value chunks, perChunk, chunkGroups;
  SmallVector<Value> partials;    ///< a buffer per accumulator: group g, column c at g * total + c
  Value block;                    ///< kernel 1's threads

  /// The state of one item (a group of chunks of a tile of columns) of
  /// kernel 1 that its fold and merge share.
  struct PartialItem {
    int64_t lanes;
    Value lanesValue, tid, local, slice, exists, column, group, firstChunk;
    SmallVector<Value> stagedPartials;
  };

  /// Loads in the fold along the contiguous dimension of the loop's
  /// innermost dimension (neighbouring columns) go by 16-byte vectors, a
  /// thread's columns of a vector folded side by side, when a host check
  /// finds the buffers aligned. A buffer contiguous along another of its
  /// dimensions than the last (a column-major view) is read through a
  /// transposed view that makes that dimension the last.
  void findVectorLoads() {
    vectorLanes = getConstantIntValue(loop.getStep()[rank - 1]) == 1 ? kMaxVectorLanes : 1;
    // Indices the lanes of a vector share: the fold's, the loop's own,
    // values from outside.
    auto sameForColumns = [&](Value v) {
      return v == fold.getInductionVar() || llvm::is_contained(loop.getInductionVars(), v) ||
             !loop->isAncestor(v.getParentBlock()->getParentOp());
    };
    for (auto load : fold.getBody()->getOps<memref::LoadOp>()) {
      ValueRange indices = load.getIndices();
      std::optional<unsigned> along = contiguousDim(load.getMemRefType());
      if (!along || indices[*along] != column0)
        continue;
      int last = static_cast<int>(indices.size()) - 1;
      int swap = static_cast<int>(*along) == last ? -1 : static_cast<int>(*along);
      int64_t lanes = vectorLanesOf(swap < 0 ? load.getMemRefType()
                                             : transposedType(load.getMemRefType(), swap));
      bool others = llvm::all_of(llvm::enumerate(indices), [&](auto entry) {
        return entry.index() == *along ||
               (entry.value() != column0 && sameForColumns(entry.value()));
      });
      if (!lanes || !others)
        continue;
      vectorLoads.push_back(load);
      swapWithLast.push_back(swap);
      vectorLanes = std::min(vectorLanes, lanes);
    }
    if (vectorLoads.empty())
      vectorLanes = 1;
  }

  /// K chunks: enough threads (a thread per vector of columns), chunks of
  /// at least minChunk rows. The chunks depend only on the sizes, so that
  /// either launch gives the same bits. Chunks merge in groups of
  /// groupChunks in kernel 1.
  void sizeChunks(OpBuilder &b) {
    std::tie(counts, total) = tripCounts(b, loop);
    one = indexConstant(b, loc, 1);
    t = nerve::gpumap::tuneSplitReduction({vectorLanes});
    Value aimedAt = indexConstant(b, loc, t.columnsAimedAt);
    Value columns = arith::MaxUIOp::create(b, loc, total, one);
    chunks = arith::CeilDivUIOp::create(b, loc, aimedAt, columns);
    Value longest = arith::CeilDivUIOp::create(b, loc, rows, indexConstant(b, loc, t.minChunk));
    chunks = arith::MinUIOp::create(b, loc, chunks, longest);
    chunks = arith::MaxUIOp::create(b, loc, chunks, one);
    perChunk = arith::CeilDivUIOp::create(b, loc, rows, chunks);
    chunkGroups =
        arith::CeilDivUIOp::create(b, loc, chunks, indexConstant(b, loc, t.groupChunks));
    Value partialsSize = arith::MulIOp::create(b, loc, chunkGroups, total);
    for (Type accType : fold.getResultTypes())
      partials.push_back(memref::AllocOp::create(
          b, loc, MemRefType::get({ShapedType::kDynamic}, accType), ValueRange{partialsSize}));
    block = indexConstant(b, loc, t.partialThreads);
  }

  /// What each vector load reads: its buffer, or the transposed view.
  void makeVectorViews(OpBuilder &b) {
    for (auto [load, swap] : llvm::zip(vectorLoads, swapWithLast)) {
      if (swap < 0 || vectorLanes <= 1) {
        vectorViews.push_back(load.getMemRef());
        continue;
      }
      auto perm = swapWithLastMap(load.getMemRefType().getRank(), swap, b.getContext());
      vectorViews.push_back(
          memref::TransposeOp::create(b, loc, load.getMemRef(), AffineMapAttr::get(perm)));
    }
  }

  /// What the body computes before the fold (sizes, values per column).
  void cloneBefore(OpBuilder &ib, IRMapping &m) {
    for (Operation &op : loop.getBody()->without_terminator()) {
      if (&op == fold.getOperation())
        break;
      ib.clone(op, m);
    }
  }

  /// Kernel 1: blocks of groupChunks slices x (block / groupChunks)
  /// vectors of columns, the columns fastest (coalesced); a block takes one
  /// group of chunks (slice s folds chunk g * groupChunks + s) of a tile of
  /// columns, lane j of a thread's vector folding column + j. The slices
  /// then merge the group's chunks in order through shared memory, so that
  /// one partial per group and column reaches kernel 2.
  void buildPartials(OpBuilder &hb, int64_t lanes) {
    PartialItem item;
    item.lanes = lanes;
    item.lanesValue = indexConstant(hb, loc, lanes);
    Value vectors = lanes == 1 ? total : arith::DivUIOp::create(hb, loc, total, item.lanesValue);
    Value widthValue = indexConstant(hb, loc, t.tileWidth);
    Value tiles = arith::CeilDivUIOp::create(hb, loc, vectors, widthValue);
    Value work = arith::MulIOp::create(hb, loc, chunkGroups, tiles);
    SmallVector<SharedArray> staged;
    for (Type accType : fold.getResultTypes())
      staged.push_back({accType, t.partialThreads * lanes});
    Value sharedBytes =
        arith::ConstantIntOp::create(hb, loc, hb.getI32Type(), sharedArraysBytes(staged));
    auto body = [&](OpBuilder &ib, gpu::LaunchOp launch) {
      item.stagedPartials = sharedArrays(ib, loc, staged);
      item.tid = launch.getThreadIds().x;
      item.local = arith::RemUIOp::create(ib, loc, item.tid, widthValue);
      item.slice = arith::DivUIOp::create(ib, loc, item.tid, widthValue);
      auto items =
          scf::ForOp::create(ib, loc, launch.getBlockIds().x, work, launch.getGridSize().x);
      OpBuilder sb = OpBuilder::atBlockBegin(items.getBody());
      Value index = items.getInductionVar();
      item.group = arith::DivUIOp::create(sb, loc, index, tiles);
      Value groupTiles = arith::MulIOp::create(sb, loc, item.group, tiles);
      Value tile = arith::SubIOp::create(sb, loc, index, groupTiles);
      Value tileStart = arith::MulIOp::create(sb, loc, tile, widthValue);
      Value vector = arith::AddIOp::create(sb, loc, tileStart, item.local);
      // Threads past the last vector fold the last one and store nothing.
      item.exists = arith::CmpIOp::create(sb, loc, arith::CmpIPredicate::ult, vector, vectors);
      Value lastVector = arith::SubIOp::create(sb, loc, vectors, one);
      vector = arith::SelectOp::create(sb, loc, item.exists, vector, lastVector);
      item.column = lanes == 1 ? vector : arith::MulIOp::create(sb, loc, vector, item.lanesValue);
      Value groupChunks = indexConstant(sb, loc, t.groupChunks);
      item.firstChunk = arith::MulIOp::create(sb, loc, item.group, groupChunks);
      SmallVector<Value> lanePartials = foldChunk(sb, item);
      Value blockValue = indexConstant(sb, loc, t.partialThreads);
      storeLanePartials(sb, item, lanePartials);
      gpu::BarrierOp::create(sb, loc);
      mergeChunks(sb, item, blockValue);
      // The next item's slices overwrite the shared partials.
      gpu::BarrierOp::create(sb, loc);
    };
    buildLaunchOver(hb, loc, work, one, block, body, sharedBytes);
  }

  /// This thread's chunk of its vector's columns folded: each lane's
  /// partial tuple, lane-major.
  SmallVector<Value> foldChunk(OpBuilder &sb, const PartialItem &item) {
    Value k = arith::AddIOp::create(sb, loc, item.firstChunk, item.slice);
    IRMapping m;
    SmallVector<Value> ivs = delinearize(sb, loc, loop, counts, item.column);
    m.map(loop.getInductionVars(), ivs);
    SmallVector<IRMapping> maps = laneMappings(sb, loc, m, column0, ivs.back(), item.lanes);
    for (IRMapping &laneMap : maps)
      cloneBefore(sb, laneMap);
    // A chunk past the last (the last group's) folds nothing.
    Value span = arith::MulIOp::create(sb, loc, perChunk, step);
    Value offset = arith::MulIOp::create(sb, loc, k, span);
    Value from = arith::AddIOp::create(sb, loc, lb, offset);
    Value start = arith::MinSIOp::create(sb, loc, from, ub);
    Value to = arith::AddIOp::create(sb, loc, start, span);
    Value end = arith::MinSIOp::create(sb, loc, to, ub);
    Value zero = indexConstant(sb, loc, 0);
    return stridedPartials(
        sb, loc, r, start, end, step, zero, one, item.lanes,
        [&](OpBuilder &vb, Value iv) { return rowValues(vb, maps, iv, item.lanes); },
        t.rowsInFlight, /*inOrder=*/true);
  }

  /// The values row `iv` folds in, for each lane mapping of `maps`: the
  /// fold's body but its step, vector loads where they apply.
  SmallVector<Value> rowValues(OpBuilder &vb, ArrayRef<IRMapping> maps, Value iv,
                               int64_t lanes) {
    SmallVector<IRMapping> inner(maps);
    for (IRMapping &laneMap : inner)
      laneMap.map(fold.getInductionVar(), iv);
    for (Operation &op : fold.getBody()->without_terminator()) {
      if (r.isStep(&op))
        continue;
      auto load = dyn_cast<memref::LoadOp>(op);
      auto vectorAt = load ? llvm::find(vectorLoads, load) : vectorLoads.end();
      if (lanes > 1 && vectorAt != vectorLoads.end()) {
        size_t i = vectorAt - vectorLoads.begin();
        SmallVector<Value> indices = mapped(inner.front(), load.getIndices());
        if (swapWithLast[i] >= 0)
          std::swap(indices[swapWithLast[i]], indices.back());
        Value vec = vectorLoad(vb, loc, vectorViews[i], indices, lanes);
        unpackLanes(vb, loc, vec, load.getResult(), inner);
        continue;
      }
      for (IRMapping &laneMap : inner)
        vb.clone(op, laneMap);
    }
    SmallVector<Value> inputs;
    for (IRMapping &laneMap : inner)
      llvm::append_range(inputs, mapped(laneMap, r.stepInputs));
    return inputs;
  }

  /// Lane j of thread t at j * block + t: a warp's stores, and the reads of
  /// one slice's lane below, hit distinct banks.
  void storeLanePartials(OpBuilder &sb, const PartialItem &item, ArrayRef<Value> lanePartials) {
    for (int64_t j = 0; j < item.lanes; ++j) {
      Value laneStart = indexConstant(sb, loc, j * t.partialThreads);
      Value at = arith::AddIOp::create(sb, loc, laneStart, item.tid);
      for (auto [partial, shared] :
           llvm::zip(lanePartials.slice(j * partials.size(), partials.size()),
                     item.stagedPartials))
        memref::StoreOp::create(sb, loc, partial, shared, ValueRange{at});
    }
  }

  /// Slice j merges lane j of its column's chunks, in order (the last
  /// group's chunks past the last are skipped), and stores the group's
  /// partial.
  void mergeChunks(OpBuilder &sb, const PartialItem &item, Value blockValue) {
    Value mergingSlice =
        arith::CmpIOp::create(sb, loc, arith::CmpIPredicate::ult, item.slice, item.lanesValue);
    Value merges = arith::AndIOp::create(sb, loc, item.exists, mergingSlice);
    auto merge = scf::IfOp::create(sb, loc, merges, /*withElseRegion=*/false);
    OpBuilder mb = OpBuilder::atBlockBegin(&merge.getThenRegion().front());
    Value laneBase = arith::MulIOp::create(mb, loc, item.slice, blockValue);
    auto sliceAt = [&](int64_t s) -> SmallVector<Value> {
      Value offset = indexConstant(mb, loc, s * t.tileWidth);
      Value inTile = arith::AddIOp::create(mb, loc, item.local, offset);
      Value at = arith::AddIOp::create(mb, loc, laneBase, inTile);
      return llvm::map_to_vector(item.stagedPartials, [&](Value shared) -> Value {
        return memref::LoadOp::create(mb, loc, shared, ValueRange{at});
      });
    };
    SmallVector<Value> acc = sliceAt(0);
    for (int64_t s = 1; s < t.groupChunks; ++s) {
      SmallVector<Value> merged = mergePartials(mb, r, acc, sliceAt(s));
      Value chunk = arith::AddIOp::create(mb, loc, item.firstChunk, indexConstant(mb, loc, s));
      Value present = arith::CmpIOp::create(mb, loc, arith::CmpIPredicate::ult, chunk, chunks);
      for (auto [a, next] : llvm::zip(acc, merged))
        a = arith::SelectOp::create(mb, loc, present, next, a);
    }
    Value groupStart = arith::MulIOp::create(mb, loc, item.group, total);
    Value inGroup = arith::AddIOp::create(mb, loc, item.column, item.slice);
    Value at = arith::AddIOp::create(mb, loc, groupStart, inGroup);
    for (auto [value, buffer] : llvm::zip(acc, partials))
      memref::StoreOp::create(mb, loc, value, buffer, ValueRange{at});
  }

  /// Kernel 2, in one of two forms chosen by the group count (it depends
  /// only on the sizes).
  void buildCombines(OpBuilder &b) {
    Value many = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, chunkGroups,
                                       indexConstant(b, loc, t.manySlices * t.groupsPerSlice));
    auto which = scf::IfOp::create(b, loc, many, /*withElseRegion=*/true);
    OpBuilder tb = OpBuilder::atBlockBegin(&which.getThenRegion().front());
    buildCombine(tb, t.manySlices);
    OpBuilder eb = OpBuilder::atBlockBegin(&which.getElseRegion().front());
    buildCombine(eb, t.fewSlices);
  }

  /// Kernel 2: blocks of (combineThreads / S) columns x S slices. Slice s
  /// of a column combines groups s, s + S, ... (loads in flight together);
  /// slice 0 then combines the slices' partials in order, from shared
  /// memory, and runs the rest of the body. S is manySlices when the
  /// groups are many, fewSlices otherwise.
  void buildCombine(OpBuilder &hb, int64_t sliceCount) {
    SmallVector<SharedArray> slices;
    for (Type accType : fold.getResultTypes())
      slices.push_back({accType, t.combineThreads});
    int64_t width = t.combineThreads / sliceCount;
    Value sharedBytes =
        arith::ConstantIntOp::create(hb, loc, hb.getI32Type(), sharedArraysBytes(slices));
    Value columnGroups = arith::CeilDivUIOp::create(hb, loc, total, indexConstant(hb, loc, width));
    Value combineBlock = indexConstant(hb, loc, t.combineThreads);
    auto body = [&](OpBuilder &ib, gpu::LaunchOp launch) {
      SmallVector<Value> slicePartials = sharedArrays(ib, loc, slices);
      Value tid = launch.getThreadIds().x;
      Value columnsValue = indexConstant(ib, loc, width);
      Value local = arith::RemUIOp::create(ib, loc, tid, columnsValue);
      Value slice = arith::DivUIOp::create(ib, loc, tid, columnsValue);
      auto items = scf::ForOp::create(ib, loc, launch.getBlockIds().x, columnGroups,
                                      launch.getGridSize().x);
      OpBuilder gb = OpBuilder::atBlockBegin(items.getBody());
      Value groupStart = arith::MulIOp::create(gb, loc, items.getInductionVar(), columnsValue);
      Value column = arith::AddIOp::create(gb, loc, groupStart, local);
      Value exists = arith::CmpIOp::create(gb, loc, arith::CmpIPredicate::ult, column, total);
      Value lastColumn = arith::SubIOp::create(gb, loc, total, one);
      column = arith::SelectOp::create(gb, loc, exists, column, lastColumn);
      Value zero = indexConstant(gb, loc, 0);
      Value sliceStep = indexConstant(gb, loc, sliceCount);
      SmallVector<Value> partial = stridedPartials(
          gb, loc, r, zero, chunkGroups, one, slice, sliceStep, /*width=*/1,
          [&](OpBuilder &vb, Value k) {
            Value rowStart = arith::MulIOp::create(vb, loc, k, total);
            Value at = arith::AddIOp::create(vb, loc, rowStart, column);
            return llvm::map_to_vector(partials, [&](Value buffer) -> Value {
              return memref::LoadOp::create(vb, loc, buffer, ValueRange{at});
            });
          },
          /*unroll=*/4, /*inOrder=*/false, FoldOf::Partials);
      for (auto [value, shared] : llvm::zip(partial, slicePartials))
        memref::StoreOp::create(gb, loc, value, shared, ValueRange{tid});
      gpu::BarrierOp::create(gb, loc);
      Value first = arith::CmpIOp::create(gb, loc, arith::CmpIPredicate::eq, slice,
                                          indexConstant(gb, loc, 0));
      Value finishes = arith::AndIOp::create(gb, loc, first, exists);
      auto finish = scf::IfOp::create(gb, loc, finishes, /*withElseRegion=*/false);
      OpBuilder fb = OpBuilder::atBlockBegin(&finish.getThenRegion().front());
      finishColumn(fb, column, local, width, sliceCount, slicePartials);
      // The next group's slices overwrite the shared partials.
      gpu::BarrierOp::create(gb, loc);
    };
    buildLaunchOver(hb, loc, columnGroups, one, combineBlock, body, sharedBytes);
  }

  /// A column's first slice combines the slices' partials in order and
  /// runs the rest of the loop's body with the fold's results.
  void finishColumn(OpBuilder &fb, Value column, Value local, int64_t width, int64_t sliceCount,
                    ArrayRef<Value> slicePartials) {
    IRMapping m;
    m.map(loop.getInductionVars(), delinearize(fb, loc, loop, counts, column));
    cloneBefore(fb, m);
    SmallVector<Value> acc = mapped(m, fold.getInitArgs());
    for (int64_t s = 0; s < sliceCount; ++s) {
      Value at = arith::AddIOp::create(fb, loc, local, indexConstant(fb, loc, s * width));
      SmallVector<Value> slicePartial =
          llvm::map_to_vector(slicePartials, [&](Value shared) -> Value {
            return memref::LoadOp::create(fb, loc, shared, ValueRange{at});
          });
      acc = mergePartials(fb, r, acc, slicePartial);
    }
    m.map(fold.getResults(), acc);
    bool after = false;
    for (Operation &op : loop.getBody()->without_terminator()) {
      if (after)
        fb.clone(op, m);
      after |= &op == fold.getOperation();
    }
  }
};

} // namespace

bool nerve::loop_mapping::mapSplitReduction(scf::ParallelOp loop) {
  std::optional<LaneReduction> r = splitFold(loop);
  if (!r)
    return false;
  return SplitReductionBuilder(loop, *r).build();
}
