//===- RowGroups.h - the loops a row program fuses ---------------*- C++ -*-===//
//
// Finding a row program (RowPrograms.cpp): the loops reducing rows into row
// buffers, the elementwise pass after them, what they stage and whether
// they have a vector form. The matching is apart from the kernel's
// construction, which reads only the RowGroup it yields.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_LIB_CONVERSION_PARALLELLOOPSTOGPU_ROWGROUPS_H
#define NERVE_LIB_CONVERSION_PARALLELLOOPSTOGPU_ROWGROUPS_H

#include "LoopMapping.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <optional>

namespace nerve::loop_mapping {

/// A parallel loop's induction variables, as a range that outlives the call.
mlir::ValueRange ivsOf(mlir::scf::ParallelOp loop);
bool isZeroToUnitStep(mlir::Value lb, mlir::Value step);
/// Whether `indices` are exactly `ivs` (a row) followed by `col` when given.
bool indexesRow(mlir::ValueRange indices, mlir::ValueRange ivs, mlir::Value col = {});

/// The loops of one row program.
struct RowGroup {
  llvm::SmallVector<mlir::scf::ParallelOp> stats; ///< loops reducing rows into row buffers
  mlir::scf::ParallelOp final;                    ///< the elementwise pass, or null
  llvm::SmallVector<mlir::Operation *> between;   ///< host ops between the loops
  unsigned rank = 0;                              ///< row dimensions
  llvm::DenseMap<mlir::Operation *, LaneReduction> reductions;
  llvm::DenseSet<mlir::Value> buffers;          ///< row buffers the stats loops store
  llvm::SmallVector<mlir::Value> staged;        ///< inputs kept in shared memory
  LaneReduction first;                          ///< the first reduction: the column range
  int64_t lanes = 1;                            ///< columns per vector (1: no vector form)
  llvm::SmallVector<mlir::Value> vectorBuffers; ///< what the vector form accesses by vectors

  /// The loops the program takes: its statistics loops and elementwise pass.
  unsigned numLoops() const { return stats.size() + (final ? 1 : 0); }

  /// Whether a column loop walks the first reduction's columns, from 0 by 1:
  /// then thread t takes the same columns in it, and may read back what it
  /// staged.
  bool sameColumns(mlir::Value lb, mlir::Value ub, mlir::Value step) const {
    return isZeroToUnitStep(lb, step) &&
           isZeroToUnitStep(first.loop.getLowerBound(), first.loop.getStep()) &&
           equivalent(ub, first.loop.getUpperBound());
  }
};

/// The vector form of `g`, if it has one: sets its lanes and the buffers
/// the vector form accesses by vectors.
void chooseLanes(RowGroup &g);
/// Finds the row program that starts at `first`, if any.
std::optional<RowGroup> matchRowGroup(mlir::scf::ParallelOp first);

} // namespace nerve::loop_mapping

#endif // NERVE_LIB_CONVERSION_PARALLELLOOPSTOGPU_ROWGROUPS_H
