//===- SelectGPUStrategy.cpp - nerve-gpu-select-strategy --------------------===//
//
// Decide, then apply: this pass chooses how each top-level loop of a kernel
// maps onto GPU launches and writes the choice as a #gpumap.strategy;
// nerve-parallel-loops-to-gpu only applies it. The strategies' priority is
// kStrategyTable below; each matcher asks the strategy's own file (through
// LoopMapping.h) whether it takes the loop, changing nothing. A row program
// records the chip's limits (RowProgram.h) for the mapping to size it by.
//
//===----------------------------------------------------------------------===//

#include "nerve/Conversion/Passes.h"

#include "LoopMapping.h"
#include "nerve/Dialect/GPUMap/Heuristics/RowProgram.h"
#include "nerve/Target/ChipOption.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace nerve {
#define GEN_PASS_DEF_SELECTGPUSTRATEGY
#include "nerve/Conversion/Passes.h.inc"
} // namespace nerve

using namespace mlir;
using namespace nerve::loop_mapping;
using nerve::gpumap::StrategyAttr;
using nerve::gpumap::StrategyKind;

namespace {

/// What the matchers know beyond the loop: the pass's options.
struct SelectionFacts {
  int64_t blockSize;
  nerve::gpumap::RowProgramLimits rowLimits;
};

/// A strategy's parameters, when its matcher takes a loop.
struct StrategyParams {
  int64_t block = 0;
  int64_t loops = 1;
  int64_t staging = nerve::kSharedBytesWithoutOptIn;
  int64_t cluster = 0;
  int64_t lanes = 0;
};

using Matcher = std::optional<StrategyParams> (*)(scf::ParallelOp, const SelectionFacts &);

std::optional<StrategyParams> takeWholeReduction(scf::ParallelOp loop, const SelectionFacts &f) {
  if (loop.getNumResults() == 0)
    return std::nullopt;
  return StrategyParams{f.blockSize};
}

std::optional<StrategyParams> takeRowProgram(scf::ParallelOp loop, const SelectionFacts &f) {
  if (loop.getNumResults() != 0)
    return std::nullopt;
  std::optional<unsigned> loops = rowProgramLoops(loop);
  if (!loops)
    return std::nullopt;
  // Its rows too wide for a block fall back to row reductions or threads
  // of `block`.
  return StrategyParams{f.blockSize, *loops, f.rowLimits.stagingBytes, f.rowLimits.clusterBlocks};
}

std::optional<StrategyParams> takeRowReductions(scf::ParallelOp loop, const SelectionFacts &f) {
  if (loop.getNumResults() != 0 || !reducesRows(loop))
    return std::nullopt;
  return StrategyParams{f.blockSize};
}

std::optional<StrategyParams> takeSplitReduction(scf::ParallelOp loop, const SelectionFacts &) {
  if (!mapsAsSplitReduction(loop))
    return std::nullopt;
  return StrategyParams{};
}

std::optional<StrategyParams> takeTransposedStaging(scf::ParallelOp loop,
                                                    const SelectionFacts &f) {
  if (loop.getNumResults() != 0)
    return std::nullopt;
  std::optional<int64_t> threads = transposedStagingThreads(loop, f.blockSize);
  if (!threads)
    return std::nullopt;
  return StrategyParams{*threads};
}

std::optional<StrategyParams> takeTiledTranspose(scf::ParallelOp loop, const SelectionFacts &f) {
  if (!tiledTransposeApplies(loop))
    return std::nullopt;
  return StrategyParams{f.blockSize};
}

/// Every loop; by 16-byte vectors where its body suits them.
std::optional<StrategyParams> takeThreads(scf::ParallelOp loop, const SelectionFacts &f) {
  StrategyParams params{f.blockSize};
  params.lanes = vectorLanesFor(loop);
  return params;
}

/// A row of the priority table: the first whose matcher takes a loop
/// maps it. Rows marked `collapsed` see the loop with the parallel loops
/// nested directly in it merged into it.
struct StrategyRule {
  StrategyKind kind;
  bool collapsed;
  Matcher take;
};

// A sequential fold that states its merge (whole_fold, a fold.for) comes before all
// of these; it is an scf.for, not a parallel loop (selectFunction).
const StrategyRule kStrategyTable[] = {
    {StrategyKind::whole_reduction, false, takeWholeReduction},
    {StrategyKind::row_program, false, takeRowProgram},
    {StrategyKind::row_reductions, false, takeRowReductions},
    {StrategyKind::split_reduction, false, takeSplitReduction},
    {StrategyKind::transposed_staging, true, takeTransposedStaging},
    {StrategyKind::tiled_transpose, true, takeTiledTranspose},
    {StrategyKind::threads, true, takeThreads},
};

void setStrategy(Operation *op, StrategyKind kind, StrategyParams params) {
  op->setAttr(nerve::gpumap::GPUMapDialect::kStrategyAttrName,
              StrategyAttr::get(op->getContext(), kind, params.block, params.loops,
                                params.staging, params.cluster, params.lanes));
}

/// The strategy of `loop` from the table (the last row takes every loop);
/// `loop` may be replaced by its collapsed form, which is returned.
scf::ParallelOp selectLoop(scf::ParallelOp loop, const SelectionFacts &facts) {
  bool collapsed = false;
  for (const StrategyRule &rule : kStrategyTable) {
    if (rule.collapsed && !collapsed) {
      loop = collapseNested(loop);
      collapsed = true;
    }
    if (std::optional<StrategyParams> params = rule.take(loop, facts)) {
      setStrategy(loop, rule.kind, *params);
      return loop;
    }
  }
  llvm_unreachable("the table's last row takes every loop");
}

struct SelectGPUStrategyPass : nerve::impl::SelectGPUStrategyBase<SelectGPUStrategyPass> {
  using Base::Base;

  void runOnOperation() override {
    const nerve::ChipProfile *profile = nullptr;
    if (!chip.empty()) {
      profile = nerve::chipOption(getOperation(), chip);
      if (!profile)
        return signalPassFailure();
    }
    SelectionFacts facts{blockSize, nerve::gpumap::rowProgramLimits(profile)};
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (func->hasAttr("nerve.kernel") && !func.isExternal())
        selectFunction(func, facts);
  }

  /// Walks the function's top level as nerve-parallel-loops-to-gpu does:
  /// ops that touch memory outside loops run on the device, one thread
  /// (`pending`), and a fold that uses what they compute cannot be a
  /// whole_fold, whose result the host reads.
  void selectFunction(func::FuncOp func, const SelectionFacts &facts) {
    llvm::SmallPtrSet<Operation *, 8> pending;
    unsigned programLoopsLeft = 0; // loops of a row program after its first
    for (Operation *next = &func.front().front(); next;) {
      Operation &op = *next;
      next = op.getNextNode();
      bool usesDeviceValue = llvm::any_of(
          op.getOperands(), [&](Value v) { return pending.contains(v.getDefiningOp()); });
      if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
        pending.clear();
        if (programLoopsLeft > 0) {
          --programLoopsLeft;
          continue;
        }
        if (!nerve::gpumap::strategyOf(loop))
          loop = selectLoop(loop, facts);
        StrategyAttr strategy = nerve::gpumap::strategyOf(loop);
        if (strategy.getKind() == StrategyKind::row_program)
          programLoopsLeft = strategy.getLoops() - 1;
        // A whole reduction's results are read back on the device.
        if (loop.getNumResults() != 0)
          pending.insert(loop);
      } else if (auto fold = dyn_cast<nerve::fold::ForOp>(op);
                 fold && !usesDeviceValue &&
                 (nerve::gpumap::strategyOf(fold) || foldsAsWhole(fold))) {
        pending.clear();
        if (!nerve::gpumap::strategyOf(fold))
          setStrategy(fold, StrategyKind::whole_fold, StrategyParams{blockSize});
      } else if (staysOnHost(&op) && !usesDeviceValue) {
        pending.clear();
      } else {
        pending.insert(&op);
      }
    }
  }
};

} // namespace
