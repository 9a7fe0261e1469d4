//===- CPUTasks.h - facts the CPU strategies share ---------------*- C++ -*-===//
//
// What nerve-cpu-select-strategy sizes a time_chunks loop by and
// nerve-apply-cpu-strategy builds it from: the parts of an iteration
// around its recurrence and the values that cross between them.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_LIB_TRANSFORMS_CPUTASKS_H
#define NERVE_LIB_TRANSFORMS_CPUTASKS_H

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <optional>

namespace nerve::cpu_tasks {

/// A time_chunks loop's iteration: the ops before the recurrence that
/// depend on the iteration (`before`), the recurrence, the ops after it
/// (`after`), the ops the same for every iteration (`uniform`, hoisted to
/// the task) and the values of `before` read by the recurrence or `after`
/// (`crossing`, kept in scratch between the parts).
struct IterationParts {
  mlir::scf::ForOp recurrence;
  llvm::SmallVector<mlir::Operation *> uniform, before, after;
  llvm::SmallVector<mlir::Value> crossing;
};

/// The parts of `loop`'s iteration; nullopt when it is no recurrence.
std::optional<IterationParts> iterationParts(mlir::scf::ParallelOp loop);

/// Scratch bytes an iteration needs: its crossing values and the
/// recurrence's carried values.
int64_t scratchBytes(const IterationParts &parts);

/// The parallel loops from `first` on that may run in the same tasks, one
/// iteration of their outermost dimension at a time (a softmax's row
/// maximum, row sum and elementwise pass): `first` and the outermost
/// parallel loops after it in its block, without results, over the same
/// outermost range, where each buffer that one of them writes and another
/// accesses is accessed by all of them at the row their outermost
/// dimension gives (its first index), and the ops between them can move
/// before `first` (pure ops and allocations of what is defined before it).
/// At least `first` alone.
llvm::SmallVector<mlir::scf::ParallelOp> rowGroupFrom(mlir::scf::ParallelOp first);

/// The iterations of a loop from `lb` to `ub` by `step` (none when the
/// bounds cross), built at `b`.
mlir::Value iterationCount(mlir::OpBuilder &b, mlir::Location loc, mlir::Value lb, mlir::Value ub,
                           mlir::Value step);

/// LLVM's parallel-accesses loop metadata with a fresh access group:
/// `loop`'s iterations touch no memory another touches (they were
/// iterations of an scf.parallel, or a fold's lanes), so LLVM may vectorise
/// it without run-time alias checks. SCF's lowering keeps it on the loop's
/// back edge; nerve-parallel-access-groups gives its loads and stores the
/// group. `keepLoop` also forbids unrolling it before it is vectorised.
void markParallel(mlir::scf::ForOp loop, bool keepLoop = false);

/// Whether `loop` is a fold that may keep several partial results: every
/// value it carries is combined, by one op with a neutral element (addf,
/// maximumf, ...), with a value its iteration computes from anything but
/// the carried values, and its body writes no memory.
bool isLaneFold(mlir::scf::ForOp loop);

/// Rewrites the lane fold `loop` to keep `lanes` partial results in
/// scratch: iteration j of each full block of `lanes` combines into partial
/// j mod lanes (a loop LLVM vectorises, declared parallel), then the
/// initial values, the partials in order and the iterations past the last
/// full block combine in order. The grouping depends on `lanes` alone.
void splitIntoLanes(mlir::scf::ForOp loop, int64_t lanes);

} // namespace nerve::cpu_tasks

#endif // NERVE_LIB_TRANSFORMS_CPUTASKS_H
