//===- SelectCPUStrategy.cpp - nerve-cpu-select-strategy ------------------===//
//
// Decide, then apply: chooses how each outermost parallel loop of a kernel
// runs on the CPU's threads and writes the choice as a #cpumap.strategy,
// sized by the pure functions of CPUStrategy.h; nerve-apply-cpu-strategy
// only applies it.
//
//===----------------------------------------------------------------------===//

#include "nerve/Transforms/Passes.h"

#include "CPUTasks.h"
#include "nerve/Dialect/CPUMap/Heuristics/CPUStrategy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace nerve {
#define GEN_PASS_DEF_SELECTCPUSTRATEGY
#include "nerve/Transforms/Passes.h.inc"
} // namespace nerve

using namespace mlir;
using namespace nerve::cpumap;

namespace {

/// The widest element `loop` loads or stores, in bytes (4 when none).
int64_t widestElementBytes(scf::ParallelOp loop) {
  int64_t widest = 0;
  loop.walk([&](Operation *op) {
    Type t;
    if (auto load = dyn_cast<memref::LoadOp>(op))
      t = load.getType();
    else if (auto store = dyn_cast<memref::StoreOp>(op))
      t = store.getValueToStore().getType();
    if (t && t.isIntOrFloat())
      widest = std::max<int64_t>(widest, std::max(1u, t.getIntOrFloatBitWidth() / 8));
  });
  return widest ? widest : 4;
}

/// Whether `v` depends on `iv`, through index arithmetic of `scope`.
bool dependsOn(Value v, Value iv, Operation *scope) {
  if (v == iv)
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || !scope->isProperAncestor(def) || def->getNumRegions() != 0)
    return false;
  return llvm::any_of(def->getOperands(), [&](Value o) { return dependsOn(o, iv, scope); });
}

/// Which way the recurrence of `loop` walks memory.
RecurrenceFacts recurrenceFacts(scf::ParallelOp loop, scf::ForOp recurrence) {
  RecurrenceFacts facts;
  Value iteration = loop.getInductionVars().back();
  recurrence.getBody()->walk([&](Operation *op) {
    ValueRange indices;
    if (auto load = dyn_cast<memref::LoadOp>(op))
      indices = load.getIndices();
    else if (auto store = dyn_cast<memref::StoreOp>(op))
      indices = store.getIndices();
    if (indices.empty())
      return;
    Value innermost = indices.back();
    if (dependsOn(innermost, recurrence.getInductionVar(), loop))
      ++facts.accessesAlongRecurrence;
    else if (dependsOn(innermost, iteration, loop))
      ++facts.accessesAlongIterations;
  });
  return facts;
}

/// Whether `loop` holds a fold that lanes would split.
bool holdsLaneFold(scf::ParallelOp loop) {
  WalkResult found = loop.walk([](scf::ForOp f) {
    return nerve::cpu_tasks::isLaneFold(f) ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found.wasInterrupted();
}

/// Whether `loop` is a recurrence along its iterations (time_chunks).
bool runsInTimeChunks(scf::ParallelOp loop) {
  std::optional<nerve::cpu_tasks::IterationParts> parts = nerve::cpu_tasks::iterationParts(loop);
  return parts && prefersTimeChunks(recurrenceFacts(loop, parts->recurrence));
}

StrategyAttr chooseStrategy(scf::ParallelOp loop, const CPUProfile &profile) {
  MLIRContext *ctx = loop.getContext();
  int64_t lanes = holdsLaneFold(loop) ? chooseFoldLanes(profile) : 0;
  if (loop.getNumResults() != 0) {
    bool constantInits = llvm::all_of(loop.getInitVals(), [](Value v) {
      return static_cast<bool>(v.getDefiningOp<arith::ConstantOp>());
    });
    if (!constantInits)
      return StrategyAttr::get(ctx, StrategyKind::sequential, 0, 1, lanes);
    // The blocks' own folds (nested loops of the tasks) are split too.
    return StrategyAttr::get(ctx, StrategyKind::whole_reduction,
                             chooseReductionChunk(widestElementBytes(loop)), 1,
                             chooseFoldLanes(profile));
  }
  if (std::optional<nerve::cpu_tasks::IterationParts> parts =
          nerve::cpu_tasks::iterationParts(loop))
    if (prefersTimeChunks(recurrenceFacts(loop, parts->recurrence)))
      return StrategyAttr::get(ctx, StrategyKind::time_chunks,
                               chooseTimeChunk(nerve::cpu_tasks::scratchBytes(*parts), profile),
                               1, lanes);
  return StrategyAttr::get(ctx, StrategyKind::threads, 0, 1, lanes);
}

struct SelectCPUStrategy : nerve::impl::SelectCPUStrategyBase<SelectCPUStrategy> {
  using Base::Base;

  void runOnOperation() override {
    CPUProfile cpu = hostCPUProfile();
    if (!profile.empty() && !parseCPUProfile(profile, cpu)) {
      getOperation().emitError() << "nerve-cpu-select-strategy: profile '" << profile
                                 << "' is not vector=16|32|64,l1=BYTES";
      return signalPassFailure();
    }
    SmallVector<scf::ParallelOp> outermost;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (!loop->getParentOfType<scf::ParallelOp>())
        outermost.push_back(loop);
    });
    DenseSet<Operation *> grouped;
    for (scf::ParallelOp loop : outermost) {
      if (strategyOf(loop) || grouped.contains(loop))
        continue;
      // Loops over the same rows that a task may run one after the other
      // (a softmax's three) share tasks: rows stay in cache between them.
      SmallVector<scf::ParallelOp> group = nerve::cpu_tasks::rowGroupFrom(loop);
      // Only where a loop folds rows (what the next ones read again) and
      // none is a neuron's time loop, which runs better in chunks.
      bool shares = group.size() > 1 && llvm::any_of(group, holdsLaneFold) &&
                    llvm::none_of(group, [](scf::ParallelOp l) {
                      return strategyOf(l) || runsInTimeChunks(l);
                    });
      if (shares) {
        loop->setAttr(CPUMapDialect::kStrategyAttrName,
                      StrategyAttr::get(loop.getContext(), StrategyKind::threads, 0,
                                        group.size(), chooseFoldLanes(cpu)));
        for (scf::ParallelOp member : llvm::drop_begin(group))
          grouped.insert(member);
        continue;
      }
      loop->setAttr(CPUMapDialect::kStrategyAttrName, chooseStrategy(loop, cpu));
    }
  }
};

} // namespace
