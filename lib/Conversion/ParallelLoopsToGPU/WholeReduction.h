//===- WholeReduction.h - a whole reduction, shared by its files -*- C++ -*-===//
//
// The reduction to single values that WholeReductions.cpp maps as a fixed
// tree, and the pieces of its folds that WholeReductionFlat.cpp (an N-D
// reduction folded in row-major order as one vector) shares with it.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_LIB_CONVERSION_PARALLELLOOPSTOGPU_WHOLEREDUCTION_H
#define NERVE_LIB_CONVERSION_PARALLELLOOPSTOGPU_WHOLEREDUCTION_H

#include "LoopMapping.h"

namespace nerve::loop_mapping::whole {

// This header is private to the files that map whole reductions, which are
// written against MLIR's names.
using namespace mlir;

/// A reduction to single values as mapWholeReduction maps it.
struct WholeReduction {
  Operation *op = nullptr;
  /// The parallel loop with reductions, or null for a carried fold.
  mutable scf::ParallelOp parallel; // op handles are values; accessors are not const
  /// The carried fold: its innermost loop, and the nest of loops (outermost
  /// first) whose iterations it folds.
  std::optional<LaneReduction> fold;
  SmallVector<FoldLoop> nest;
  SmallVector<Value> ivs, lowerBounds, steps;

  explicit WholeReduction(scf::ParallelOp loop)
      : op(loop), parallel(loop), ivs(loop.getInductionVars()), lowerBounds(loop.getLowerBound()),
        steps(loop.getStep()) {}
  WholeReduction(ArrayRef<FoldLoop> loops, const LaneReduction &r)
      : op(loops.front()), fold(r), nest(loops) {
    for (FoldLoop loop : loops) {
      ivs.push_back(loop.getInductionVar());
      lowerBounds.push_back(loop.getLowerBound());
      steps.push_back(loop.getStep());
    }
  }

  Block *body() const { return parallel ? parallel.getBody() : fold->loop.getBody(); }
  ValueRange inits() const {
    return parallel ? parallel.getInitVals() : nest.front().getInitArgs();
  }
  ResultRange results() const { return op->getResults(); }
  scf::ReduceOp reduce() const { return llvm::cast<scf::ReduceOp>(body()->getTerminator()); }

  /// What the iteration that `m` binds the induction variables to folds in,
  /// from a copy of the body (a fold's: all but its step).
  SmallVector<Value> valuesAt(OpBuilder &b, IRMapping &m) const {
    if (parallel)
      return reducedValues(b, parallel, m);
    for (Operation &op : body()->without_terminator())
      if (!fold->isStep(&op))
        b.clone(op, m);
    return mapped(m, fold->stepInputs);
  }
  /// `acc` with an iteration's `values` folded in.
  SmallVector<Value> step(OpBuilder &b, ValueRange acc, ValueRange values) const {
    return parallel ? combineEach(b, reduce(), acc, values) : stepAs(b, *fold, acc, values);
  }
  /// Two partial tuples merged.
  SmallVector<Value> merge(OpBuilder &b, ValueRange lhs, ValueRange rhs) const {
    return parallel ? combineEach(b, reduce(), lhs, rhs) : mergePartials(b, *fold, lhs, rhs);
  }

  /// What chunks of a 1-D reduction copy (foldChunksAhead).
  ChunkSource chunkSource() const {
    return parallel ? ChunkSource::of(parallel) : ChunkSource::of(*fold);
  }

  /// Whether the body reads memory but writes none (a fold's always does).
  bool loadsOnly() const { return !parallel || loop_mapping::loadsOnly(parallel); }

  /// The trip count of each dimension and their product, built as host
  /// code before the reduction.
  std::pair<SmallVector<Value>, Value> tripCounts(OpBuilder &b) const {
    if (parallel)
      return loop_mapping::tripCounts(b, parallel);
    SmallVector<Value> ubs;
    for (FoldLoop loop : nest)
      ubs.push_back(loop.getUpperBound());
    return loop_mapping::tripCounts(b, op->getLoc(), lowerBounds, ubs, steps);
  }

  /// The induction variables at flat iteration `linear`.
  SmallVector<Value> ivsAt(OpBuilder &b, Location loc, ArrayRef<Value> counts, Value linear) const;
};

/// The tree's sizes (loads ahead, chunks a round), from the whole
/// reduction's heuristics (nerve/Dialect/GPUMap/Heuristics/WholeReduction.h).
const nerve::gpumap::WholeReductionTuning &tuning();

/// `linear`'s digits in the mixed radix of `counts` (the outermost one
/// unbounded): the positions along each dimension. A count of 0 divides
/// as 1 (there is no iteration then).
SmallVector<Value> digitsOf(OpBuilder &b, Location loc, ArrayRef<Value> counts, Value linear);

/// `digits` plus `step` (both in the mixed radix of `counts`, each digit
/// but the outermost below its count): a carry a digit, no division.
SmallVector<Value> addDigits(OpBuilder &b, Location loc, ArrayRef<Value> counts,
                             ArrayRef<Value> digits, ArrayRef<Value> step);

/// `acc` with a round's iterations folded in, in order: `values[k]` holds
/// iteration k's values a lane each (lanes in order); iteration k > 0
/// counts only where `present[k - 1]` holds (the round's first always
/// does).
SmallVector<Value> foldRound(OpBuilder &b, Location loc, const WholeReduction &w,
                             SmallVector<Value> acc,
                             ArrayRef<SmallVector<SmallVector<Value>>> values,
                             ArrayRef<Value> present);

/// `folded` with the iterations after the last whole chunk (`chunks` of
/// `lanes`) up to `total` folded in by the thread `first` 0, one at a
/// time, each at its own position; `folded` for the others.
SmallVector<Value> foldRest(OpBuilder &b, Location loc, const WholeReduction &w,
                            ArrayRef<Value> counts, Value chunks, Value lanes, Value total,
                            Value first, ValueRange folded);

/// The loads of an N-D parallel reduction from 0 by 1 whose induction
/// variables serve only as the whole index of loads (`x[i, j]`, in order),
/// in a straight-line body: the reduction can then walk its iterations in
/// row-major order as one vector of all of them (foldFlatChunksAhead).
struct FlatLoads {
  SmallVector<memref::LoadOp> loads;
  SmallVector<Value> buffers;
  int64_t lanes = 0;
};

/// `w`'s loads when they are flat (FlatLoads), else nullopt.
std::optional<FlatLoads> flatLoadsOf(const WholeReduction &w);

/// Whether every buffer of `flat` holds the iterations in row-major order
/// without gaps (innermost stride 1, each other stride the product of the
/// counts inside it) from an address aligned to 16 bytes: the vector form
/// of foldFlatChunksAhead, reading flat views, applies.
Value flatVectorsFit(OpBuilder &b, Location loc, const FlatLoads &flat, ArrayRef<Value> counts);

/// One-dimensional views of `flat`'s buffers over `total` elements, for
/// buffers flatVectorsFit found dense.
SmallVector<Value> flatViews(OpBuilder &b, Location loc, const FlatLoads &flat, Value total);

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
                                       ArrayRef<SmallVector<Value>> laneDigits);

} // namespace nerve::loop_mapping::whole

#endif // NERVE_LIB_CONVERSION_PARALLELLOOPSTOGPU_WHOLEREDUCTION_H
