//===- FuseKernelLoops.cpp - nerve-fuse-kernel-loops ------------------------===//
//
// The first step of mapping a kernel's loops onto the GPU: neighbouring
// loops that one kernel runs better become one loop (FuseReductions.cpp,
// FuseLockstepWalks.cpp), before nerve-gpu-select-strategy chooses how
// each loop maps.
//
//===----------------------------------------------------------------------===//

#include "nerve/Conversion/Passes.h"

#include "LoopMapping.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace nerve {
#define GEN_PASS_DEF_FUSEKERNELLOOPS
#include "nerve/Conversion/Passes.h.inc"
} // namespace nerve

using namespace mlir;
using namespace nerve::loop_mapping;

namespace {

struct FuseKernelLoopsPass : nerve::impl::FuseKernelLoopsBase<FuseKernelLoopsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!func->hasAttr("nerve.kernel") || func.isExternal())
        continue;
      // A fused loop stands at the second loop's place, where the walk
      // meets it next and may fuse it with the loop after.
      for (Operation *next = &func.front().front(); next;) {
        Operation &op = *next;
        next = op.getNextNode();
        auto loop = dyn_cast<scf::ParallelOp>(op);
        if (!loop)
          continue;
        if (loop.getNumResults() == 0 && fuseReductionIntoProducer(loop))
          continue;
        fuseLockstepWalks(loop);
      }
    }
  }
};

} // namespace
