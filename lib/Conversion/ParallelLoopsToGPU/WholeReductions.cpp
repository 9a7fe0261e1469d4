//===- WholeReductions.cpp - reductions to single values as fixed trees --===//
//
// A reduction to single values (a whole-tensor sum, a mean, an argmax over
// every element) runs as two launches: up to 1024 blocks whose threads fold
// grid-stride shares in order and combine pairwise through shared memory,
// then one block over the blocks' partial values. The tree's shape depends
// only on the sizes: the same bits on every run, no atomics. Two sources
// map alike: a parallel loop with reductions (scf.reduce, a combine per
// result) and a sequential fold at the top of a kernel that states its
// merge (a fold.for, a LaneReduction of the carried form: several accumulators
// merged together, such as an argmax's value and position), which would
// otherwise run in one thread. An N-D reduction of flat loads folds as one
// vector (WholeReductionFlat.cpp); the reduction is WholeReduction.h's.
//
//===----------------------------------------------------------------------===//

#include "WholeReduction.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace nerve::loop_mapping {
using namespace whole;

namespace whole {

/// The tree's sizes (loads ahead, chunks a round), from the whole
/// reduction's heuristics (nerve/Dialect/GPUMap/Heuristics/WholeReduction.h).
const nerve::gpumap::WholeReductionTuning &tuning() {
  static const nerve::gpumap::WholeReductionTuning t = nerve::gpumap::tuneWholeReduction();
  return t;
}

/// `linear`'s digits in the mixed radix of `counts` (the outermost one
/// unbounded): the positions along each dimension. A count of 0 divides
/// as 1 (there is no iteration then).
SmallVector<Value> digitsOf(OpBuilder &b, Location loc, ArrayRef<Value> counts, Value linear) {
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

SmallVector<Value> WholeReduction::ivsAt(OpBuilder &b, Location loc, ArrayRef<Value> counts,
                                         Value linear) const {
  if (parallel)
    return delinearize(b, loc, parallel, counts, linear);
  SmallVector<Value> at;
  for (auto [digit, lb, st] : llvm::zip(digitsOf(b, loc, counts, linear), lowerBounds, steps))
    at.push_back(arith::AddIOp::create(b, loc, lb, arith::MulIOp::create(b, loc, digit, st)));
  return at;
}

/// `digits` plus `step` (both in the mixed radix of `counts`, each digit
/// but the outermost below its count): a carry a digit, no division.
SmallVector<Value> addDigits(OpBuilder &b, Location loc, ArrayRef<Value> counts,
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

/// `acc` with a round's iterations folded in, in order: `values[k]` holds
/// iteration k's values a lane each (lanes in order); iteration k > 0
/// counts only where `present[k - 1]` holds (the round's first always
/// does).
SmallVector<Value> foldRound(OpBuilder &b, Location loc, const WholeReduction &w,
                             SmallVector<Value> acc,
                             ArrayRef<SmallVector<SmallVector<Value>>> values,
                             ArrayRef<Value> present) {
  for (auto [k, lanes] : llvm::enumerate(values)) {
    SmallVector<Value> next = acc;
    for (ArrayRef<Value> lane : lanes)
      next = w.step(b, next, lane);
    for (size_t i = 0; i < acc.size(); ++i)
      acc[i] = k == 0 ? next[i] : arith::SelectOp::create(b, loc, present[k - 1], next[i], acc[i]);
  }
  return acc;
}

/// `folded` with the iterations after the last whole chunk (`chunks` of
/// `lanes`) up to `total` folded in by the thread `first` 0, one at a
/// time, each at its own position; `folded` for the others.
SmallVector<Value> foldRest(OpBuilder &b, Location loc, const WholeReduction &w,
                            ArrayRef<Value> counts, Value chunks, Value lanes, Value total,
                            Value first, ValueRange folded) {
  Value isFirst =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, first, indexConstant(b, loc, 0));
  auto tail = scf::IfOp::create(b, loc, w.op->getResultTypes(), isFirst, /*withElseRegion=*/true);
  OpBuilder tb = OpBuilder::atBlockBegin(&tail.getThenRegion().front());
  Value restStart = arith::MulIOp::create(tb, loc, chunks, lanes);
  Value unit = indexConstant(tb, loc, 1);
  auto rest = scf::ForOp::create(tb, loc, restStart, total, unit, folded);
  OpBuilder fb = OpBuilder::atBlockBegin(rest.getBody());
  IRMapping mapping;
  for (auto [iv, digit, lb, st] :
       llvm::zip(w.ivs, digitsOf(fb, loc, counts, rest.getInductionVar()), w.lowerBounds, w.steps))
    mapping.map(iv, arith::AddIOp::create(fb, loc, lb, arith::MulIOp::create(fb, loc, digit, st)));
  scf::YieldOp::create(fb, loc, w.step(fb, rest.getRegionIterArgs(), w.valuesAt(fb, mapping)));
  scf::YieldOp::create(tb, loc, rest.getResults());
  OpBuilder eb = OpBuilder::atBlockBegin(&tail.getElseRegion().front());
  scf::YieldOp::create(eb, loc, folded);
  return SmallVector<Value>(tail.getResults());
}

} // namespace whole

namespace {

/// Combines each thread's `values` over the block, pairwise in a fixed
/// tree through workgroup memory `shared`; the block's result ends in
/// element 0.
void blockTree(OpBuilder &b, Location loc, const WholeReduction &w, ValueRange shared, Value tid,
               ValueRange values, int64_t threads) {
  for (auto [buffer, v] : llvm::zip(shared, values))
    memref::StoreOp::create(b, loc, v, buffer, ValueRange{tid});
  gpu::BarrierOp::create(b, loc);
  for (int64_t half = threads / 2; half >= 1; half /= 2) {
    Value active =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tid, indexConstant(b, loc, half));
    auto guard = scf::IfOp::create(b, loc, active, /*withElseRegion=*/false);
    OpBuilder gb = OpBuilder::atBlockBegin(&guard.getThenRegion().front());
    Value other = arith::AddIOp::create(gb, loc, tid, indexConstant(gb, loc, half));
    SmallVector<Value> mine, theirs;
    for (Value buffer : shared) {
      mine.push_back(memref::LoadOp::create(gb, loc, buffer, ValueRange{tid}));
      theirs.push_back(memref::LoadOp::create(gb, loc, buffer, ValueRange{other}));
    }
    for (auto [buffer, r] : llvm::zip(shared, w.merge(gb, mine, theirs)))
      memref::StoreOp::create(gb, loc, r, buffer, ValueRange{tid});
    gpu::BarrierOp::create(b, loc);
  }
}

/// The reduction over iterations first, first + stride, ... below `total`,
/// in that order, one iteration at a time; its results.
SmallVector<Value> foldStrided(OpBuilder &b, Location loc, const WholeReduction &w,
                               ArrayRef<Value> counts, Value total, Value first, Value stride) {
  auto strided = scf::ForOp::create(b, loc, first, total, stride, w.inits());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(strided.getBody());
  IRMapping mapping;
  mapping.map(w.ivs, w.ivsAt(b, loc, counts, strided.getInductionVar()));
  scf::YieldOp::create(b, loc, w.step(b, strided.getRegionIterArgs(), w.valuesAt(b, mapping)));
  return SmallVector<Value>(strided.getResults());
}

/// foldStrided for a body that only loads: the tuning's stridedLoadsAhead
/// iterations a round, all their loads issued before any is folded in, then folded
/// in the same order (the same bits). A thread's position advances by
/// `strideDigits` (the stride's digitsOf, the same for every thread:
/// computed on the host) instead of a division an iteration;
/// an iteration past `total` reads the round's first one and is not
/// folded. A thread that folded one element at a time had one load in
/// flight: a whole-tensor f32 sum over 16384 x 4096 ran at 37% of the
/// copy bandwidth on an H200.
SmallVector<Value> foldStridedAhead(OpBuilder &b, Location loc, const WholeReduction &w,
                                    ArrayRef<Value> counts, Value total, Value first, Value stride,
                                    ArrayRef<Value> strideDigits) {
  size_t rank = counts.size();
  SmallVector<Value> inits = digitsOf(b, loc, counts, first);
  llvm::append_range(inits, w.inits());
  Value roundStride =
      arith::MulIOp::create(b, loc, stride, indexConstant(b, loc, tuning().stridedLoadsAhead));
  auto rounds = scf::ForOp::create(b, loc, first, total, roundStride, inits);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(rounds.getBody());
  ValueRange carried = rounds.getRegionIterArgs();
  SmallVector<Value> roundStart(carried.take_front(rank));
  SmallVector<Value> acc(carried.drop_front(rank));
  SmallVector<Value> at = roundStart, present;
  SmallVector<SmallVector<SmallVector<Value>>> values;
  Value linear = rounds.getInductionVar();
  for (int64_t k = 0, n = tuning().stridedLoadsAhead; k < n; ++k) {
    SmallVector<Value> position = at;
    if (k > 0) {
      linear = arith::AddIOp::create(b, loc, linear, stride);
      Value in = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, linear, total);
      present.push_back(in);
      for (auto [p, safe] : llvm::zip(position, roundStart))
        p = arith::SelectOp::create(b, loc, in, p, safe);
    }
    IRMapping mapping;
    for (auto [iv, p, lb, st] : llvm::zip(w.ivs, position, w.lowerBounds, w.steps))
      mapping.map(iv, arith::AddIOp::create(b, loc, lb, arith::MulIOp::create(b, loc, p, st)));
    values.push_back({w.valuesAt(b, mapping)});
    at = addDigits(b, loc, counts, at, strideDigits);
  }
  SmallVector<Value> yielded = at;
  llvm::append_range(yielded, foldRound(b, loc, w, acc, values, present));
  scf::YieldOp::create(b, loc, yielded);
  return SmallVector<Value>(rounds.getResults().drop_front(rank));
}

/// A 1-D reduction (planChunks: `lanes` a chunk) folded by
/// chunks: the thread `first` of `stride` takes the whole chunks first,
/// first + stride, ..., the tuning's chunksAhead a round, all their loads
/// issued before any is folded, each chunk's lanes folded in order; then thread
/// 0 folds the iterations after the last whole chunk, one at a time. By
/// vectors (`byVectors`, a vector load a chunk) or by scalars, the same
/// values are folded in the same order: the same bits, whichever form
/// the buffers' alignment allows. One 16-byte load stands for up to
/// eight of foldStridedAhead's, and the index arithmetic is a chunk's,
/// not an element's.
SmallVector<Value> foldChunksAhead(OpBuilder &b, Location loc, const WholeReduction &w,
                                   int64_t lanes, Value total, Value first, Value stride,
                                   bool byVectors) {
  Value lanesValue = indexConstant(b, loc, lanes);
  Value chunks = arith::DivUIOp::create(b, loc, total, lanesValue);
  Value lb = w.lowerBounds.front(), iv = w.ivs.front();
  ChunkSource source = w.chunkSource();
  Value roundStride =
      arith::MulIOp::create(b, loc, stride, indexConstant(b, loc, tuning().chunksAhead));
  auto rounds = scf::ForOp::create(b, loc, first, chunks, roundStride, w.inits());
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(rounds.getBody());
    Value roundFirst = rounds.getInductionVar(), at = roundFirst;
    SmallVector<Value> present;
    SmallVector<SmallVector<SmallVector<Value>>> values;
    for (int64_t k = 0, n = tuning().chunksAhead; k < n; ++k) {
      Value chunk = roundFirst;
      if (k > 0) {
        at = arith::AddIOp::create(b, loc, at, stride);
        present.push_back(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, at, chunks));
        chunk = arith::SelectOp::create(b, loc, present.back(), at, roundFirst);
      }
      Value start =
          arith::AddIOp::create(b, loc, lb, arith::MulIOp::create(b, loc, chunk, lanesValue));
      SmallVector<IRMapping> maps = laneMappings(b, loc, IRMapping(), iv, start, lanes);
      values.push_back(chunkValues(b, loc, source, maps, byVectors));
    }
    scf::YieldOp::create(
        b, loc,
        foldRound(b, loc, w, SmallVector<Value>(rounds.getRegionIterArgs()), values, present));
  }
  return foldRest(b, loc, w, {total}, chunks, lanesValue, total, first, rounds.getResults());
}

/// The store that is `result`'s only use, when the reduction's last kernel
/// can do it instead of a launch of its own: right after `op` (nothing
/// between touches memory), into a buffer at indices defined before it (a
/// tdim.reduce into a 0-d output).
memref::StoreOp storedAfter(Operation *op, Value result) {
  if (!result.hasOneUse())
    return {};
  auto store = dyn_cast<memref::StoreOp>(*result.getUsers().begin());
  if (!store || store.getValueToStore() != result || store->getBlock() != op->getBlock())
    return {};
  for (Operation *next = op->getNextNode(); next != store; next = next->getNextNode())
    if (!isMemoryEffectFree(next))
      return {};
  auto definedBefore = [&](Value v) {
    Operation *def = v.getDefiningOp();
    return !def || def->getBlock() != op->getBlock() || def->isBeforeInBlock(op);
  };
  if (!definedBefore(store.getMemRef()) || !llvm::all_of(store.getIndices(), definedBefore))
    return {};
  return store;
}

/// Builds the two launches of one whole-tensor reduction (mapWhole).
class WholeReductionBuilder {
public:
  WholeReductionBuilder(const WholeReduction &w, int64_t blockSize)
      : w(w), op(w.op), loc(w.op->getLoc()),
        threads(int64_t(1) << llvm::Log2_64(std::max<int64_t>(blockSize, 32))) {}

  Operation *build() {
    OpBuilder b(op);
    planShares(b);
    allocateResults(b);
    buildFoldKernel(b);
    buildTreeKernel(b);
    for (memref::StoreOp store : direct)
      if (store)
        store.erase();
    return finish();
  }

private:
  const WholeReduction &w;
  Operation *op;
  Location loc;
  int64_t threads;
  SmallVector<Value> counts;
  Value total, block, one, blocks;
  bool lockstep = false, ahead = false;
  std::optional<ChunkPlan> chunked;
  std::optional<FlatLoads> flat;
  SmallVector<Value> strideDigits;
  SmallVector<SmallVector<Value>> laneDigits;
  SmallVector<Value> partials, finals; ///< a partial per block; each result's buffer (or null)
  SmallVector<memref::StoreOp> direct; ///< the store the last kernel does instead, per result

  /// How threads fold their shares, and the grid: up to 1024 blocks.
  void planShares(OpBuilder &b) {
    std::tie(counts, total) = w.tripCounts(b);
    lockstep = w.parallel && walksInLockstep(w.parallel);
    if (lockstep)
      threads = lockstepThreads(w.parallel, threads);
    block = indexConstant(b, loc, threads);
    one = indexConstant(b, loc, 1);
    // A thread folding ahead (foldStridedAhead) takes a whole round before
    // a block more is launched: one with a single iteration spent its
    // rounds' index arithmetic on loads past the end (H200, f32 sum of
    // 256 x 1024: 11.2 us against 7.8 an iteration at a time).
    ahead = !lockstep && w.loadsOnly();
    // A 1-D one folds by chunks (foldChunksAhead), a round of chunks a
    // thread likewise.
    chunked = ahead && w.ivs.size() == 1 ? planChunks(w.chunkSource()) : std::nullopt;
    // One over several dimensions whose indices serve only its loads folds
    // chunks of its iterations in row-major order (foldFlatChunksAhead).
    flat = ahead ? flatLoadsOf(w) : std::nullopt;
    Value perBlock = ahead ? indexConstant(b, loc, threads * tuning().stridedLoadsAhead) : block;
    Value work = total;
    if (chunked || flat) {
      perBlock = indexConstant(b, loc, threads * tuning().chunksAhead);
      Value lanes = indexConstant(b, loc, chunked ? chunked->lanes : flat->lanes);
      work = arith::DivUIOp::create(b, loc, total, lanes);
    }
    Value some = arith::MaxUIOp::create(b, loc, work, one);
    Value wanted = arith::CeilDivUIOp::create(b, loc, some, perBlock);
    Value most = indexConstant(b, loc, 1024);
    blocks = arith::MinUIOp::create(b, loc, wanted, most);
    if (flat) {
      // The scalar form's steps, the same for every thread: a grid stride
      // of chunks, and each lane from its chunk's first.
      Value gridThreads = arith::MulIOp::create(b, loc, blocks, block);
      Value lanes = indexConstant(b, loc, flat->lanes);
      Value chunkStride = arith::MulIOp::create(b, loc, gridThreads, lanes);
      strideDigits = digitsOf(b, loc, counts, chunkStride);
      for (int64_t j = 0; j < flat->lanes; ++j)
        laneDigits.push_back(digitsOf(b, loc, counts, indexConstant(b, loc, j)));
    } else if (ahead && !chunked) {
      strideDigits = digitsOf(b, loc, counts, arith::MulIOp::create(b, loc, blocks, block));
    }
  }

  /// A buffer of a partial per block for each result, and one for the
  /// result unless the last kernel stores it where the loop's result went.
  void allocateResults(OpBuilder &b) {
    for (auto [t, result] : llvm::zip(op->getResultTypes(), w.results())) {
      partials.push_back(memref::AllocOp::create(
          b, loc, MemRefType::get({ShapedType::kDynamic}, t), ValueRange{blocks}));
      direct.push_back(storedAfter(op, result));
      finals.push_back(direct.back() ? Value()
                                     : memref::AllocOp::create(b, loc, MemRefType::get({}, t)));
    }
  }

  void launchWithShared(OpBuilder &lb, Value grid,
                        function_ref<void(OpBuilder &, gpu::LaunchOp, ValueRange)> fn) {
    buildLaunch(lb, loc, grid, block, [&](OpBuilder &ib, gpu::LaunchOp launch) {
      SmallVector<Value> shared;
      for (Type t : op->getResultTypes())
        shared.push_back(workgroupArray(launch, t, threads, loc));
      fn(ib, launch, shared);
    });
  }

  void whenFirstThread(OpBuilder &ib, Value tid, function_ref<void(OpBuilder &)> fn) {
    Value first =
        arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::eq, tid, indexConstant(ib, loc, 0));
    auto guard = scf::IfOp::create(ib, loc, first, /*withElseRegion=*/false);
    OpBuilder gb = OpBuilder::atBlockBegin(&guard.getThenRegion().front());
    fn(gb);
  }

  /// Kernel 1, by vectors or by scalars where the buffers allow.
  void buildFoldKernel(OpBuilder &b) {
    if (chunked) {
      // By vectors where every buffer's chunks are aligned, else by scalars.
      Value fits = vectorAccessesFit(b, loc, chunked->buffers, chunked->lanes,
                                     indexConstant(b, loc, 0), w.lowerBounds.front());
      buildVectorsIfFit(b, loc, fits, chunked->lanes,
                        [&](OpBuilder &kb, int64_t lanes) { foldShares(kb, lanes > 1); });
    } else if (flat) {
      // By vectors of flat views where every buffer is dense and aligned,
      // else lane by lane at each position.
      buildVectorsIfFit(b, loc, flatVectorsFit(b, loc, *flat, counts), flat->lanes,
                        [&](OpBuilder &kb, int64_t lanes) { foldShares(kb, lanes > 1); });
    } else {
      foldShares(b, false);
    }
  }

  /// Kernel 1: every thread folds its share (in lockstep when the body
  /// walks rows, as a neuron's time loop does), every block its threads.
  void foldShares(OpBuilder &kb, bool byVectors) {
    SmallVector<Value> views;
    if (flat && byVectors)
      views = flatViews(kb, loc, *flat, total);
    launchWithShared(kb, blocks, [&](OpBuilder &ib, gpu::LaunchOp launch, ValueRange shared) {
      Value tid = launch.getThreadIds().x, bid = launch.getBlockIds().x;
      SmallVector<Value> folded = threadShare(ib, launch, byVectors, views);
      blockTree(ib, loc, w, shared, tid, folded, threads);
      whenFirstThread(ib, tid, [&](OpBuilder &gb) {
        for (auto [buffer, partial] : llvm::zip(shared, partials)) {
          Value v = memref::LoadOp::create(gb, loc, buffer, ValueRange{indexConstant(gb, loc, 0)});
          memref::StoreOp::create(gb, loc, v, partial, ValueRange{bid});
        }
      });
    });
  }

  /// This thread's fold of its share, in the form planShares chose.
  SmallVector<Value> threadShare(OpBuilder &ib, gpu::LaunchOp launch, bool byVectors,
                                 ArrayRef<Value> views) {
    if (lockstep)
      if (std::optional<SmallVector<Value>> folded =
              foldInLockstep(ib, launch, w.parallel, counts, total, block))
        return *folded;
    Value tid = launch.getThreadIds().x, bid = launch.getBlockIds().x;
    Value first = arith::AddIOp::create(ib, loc, arith::MulIOp::create(ib, loc, bid, block), tid);
    Value stride = arith::MulIOp::create(ib, loc, launch.getGridSize().x, block);
    if (chunked)
      return foldChunksAhead(ib, loc, w, chunked->lanes, total, first, stride, byVectors);
    if (flat)
      return foldFlatChunksAhead(ib, loc, w, *flat, counts, total, first, stride, views,
                                 strideDigits, laneDigits);
    if (ahead)
      return foldStridedAhead(ib, loc, w, counts, total, first, stride, strideDigits);
    return foldStrided(ib, loc, w, counts, total, first, stride);
  }

  /// Kernel 2: one block over the partial values.
  void buildTreeKernel(OpBuilder &b) {
    launchWithShared(b, one, [&](OpBuilder &ib, gpu::LaunchOp launch, ValueRange shared) {
      Value tid = launch.getThreadIds().x;
      auto strided = scf::ForOp::create(ib, loc, tid, blocks, block, w.inits());
      {
        OpBuilder::InsertionGuard guard(ib);
        ib.setInsertionPointToStart(strided.getBody());
        SmallVector<Value> values = llvm::map_to_vector(partials, [&](Value partial) -> Value {
          return memref::LoadOp::create(ib, loc, partial, ValueRange{strided.getInductionVar()});
        });
        scf::YieldOp::create(ib, loc, w.merge(ib, strided.getRegionIterArgs(), values));
      }
      blockTree(ib, loc, w, shared, tid, strided.getResults(), threads);
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
  }

  /// Each result is read just before its first use (host ops in between
  /// stay on the host); the buffers die with the call. Returns the op to
  /// go on mapping from.
  Operation *finish() {
    Block *body = op->getBlock();
    Operation *resume = op->getNextNode();
    for (auto [result, buffer] : llvm::zip(w.results(), finals)) {
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
    op->erase();
    return resume;
  }
};

/// mapWholeReduction for either source.
Operation *mapWhole(const WholeReduction &w, int64_t blockSize) {
  return WholeReductionBuilder(w, blockSize).build();
}

} // namespace

bool loadsOnly(scf::ParallelOp loop) {
  WalkResult r = loop.getBody()->walk([](Operation *op) {
    return isa<memref::LoadOp>(op) || isMemoryEffectFree(op) ? WalkResult::advance()
                                                             : WalkResult::interrupt();
  });
  return !r.wasInterrupted();
}

SmallVector<Value> reducedValues(OpBuilder &b, scf::ParallelOp loop, IRMapping &mapping) {
  for (Operation &op : loop.getBody()->without_terminator())
    b.clone(op, mapping);
  return mapped(mapping, loop.getBody()->getTerminator()->getOperands());
}

memref::LoadOp readBeforeFirstUse(Value result, Value buffer) {
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

memref::StoreOp storedDirectly(scf::ParallelOp loop, Value result) {
  return storedAfter(loop, result);
}

Operation *mapWholeReduction(scf::ParallelOp loop, int64_t blockSize) {
  return mapWhole(WholeReduction(loop), blockSize);
}

/// `outer` as a fold that states its merge, over one loop or a nest of
/// them (a whole-tensor argmax over a matrix): each loop's body the next
/// loop, started from the accumulators and yielding what it ends with,
/// its bounds defined before the nest; the innermost a carried fold. The
/// init values are constants (the identities).
static std::optional<WholeReduction> matchWholeFold(fold::ForOp outer) {
  if (!llvm::all_of(outer.getInitArgs(), [](Value init) {
        return static_cast<bool>(init.getDefiningOp<arith::ConstantOp>());
      }))
    return std::nullopt;
  auto outside = [&](Value v) { return !outer->isAncestor(v.getParentBlock()->getParentOp()); };
  SmallVector<FoldLoop> nest{outer};
  for (FoldLoop loop = outer;;) {
    Block *body = loop.getBody();
    auto inner = dyn_cast<scf::ForOp>(body->front());
    if (!inner || std::next(body->begin()) != std::prev(body->end()) ||
        !llvm::equal(inner.getInitArgs(), loop.getRegionIterArgs()) ||
        !llvm::equal(body->getTerminator()->getOperands(), inner.getResults()) ||
        !outside(inner.getLowerBound()) || !outside(inner.getUpperBound()) ||
        !outside(inner.getStep()))
      break;
    if (auto step = getConstantIntValue(loop.getStep()); !step || *step <= 0)
      return std::nullopt;
    nest.push_back(inner);
    loop = inner;
  }
  std::optional<LaneReduction> r = matchCarriedFold(nest.back(), outer);
  if (!r)
    return std::nullopt;
  return WholeReduction(nest, *r);
}

bool foldsFlat(scf::ParallelOp loop) {
  WholeReduction w(loop);
  return w.loadsOnly() && !walksInLockstep(loop) && flatLoadsOf(w).has_value();
}

bool foldsAsWhole(fold::ForOp loop) { return matchWholeFold(loop).has_value(); }

Operation *mapWholeFold(fold::ForOp loop, int64_t blockSize) {
  std::optional<WholeReduction> w = matchWholeFold(loop);
  return w ? mapWhole(*w, blockSize) : nullptr;
}

} // namespace nerve::loop_mapping
