//===- WholeReduction.h - how a whole-tensor reduction is sized --*- C++ -*-===//
//
// The whole-tensor reduction's heuristics (a fixed tree of two launches,
// or by rows first where rows are long), as pure functions. The numbers
// were tuned on an H200 and depend on no chip fact yet (what each measured
// is in WholeReduction.cpp and docs/decisions.md).
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_DIALECT_GPUMAP_HEURISTICS_WHOLEREDUCTION_H
#define NERVE_DIALECT_GPUMAP_HEURISTICS_WHOLEREDUCTION_H

#include <cstdint>

namespace nerve::gpumap {

/// How the tree's first launch folds: iterations of a strided fold whose
/// loads a thread issues together, and 16-byte chunks a round of a fold by
/// chunks.
struct WholeReductionTuning {
  int64_t stridedLoadsAhead = 0;
  int64_t chunksAhead = 0;
  /// A reduction over two or more dimensions goes by rows first (a row
  /// reduction into a value a row, then that buffer's reduction) when its
  /// rows have at least `minRowLength` elements and the tensor at least
  /// `minRowsElements`, at run time.
  int64_t minRowLength = 0;
  int64_t minRowsElements = 0;
};

/// The sizes of a whole-tensor reduction.
WholeReductionTuning tuneWholeReduction();

} // namespace nerve::gpumap

#endif // NERVE_DIALECT_GPUMAP_HEURISTICS_WHOLEREDUCTION_H
