//===- FoldToSCF.cpp - fold.for as the scf.for it runs as ----------------===//
//
// A fold that is not split runs its iterations in order, which is what
// scf.for says; its merge region served only a split and goes with it.
//
//===----------------------------------------------------------------------===//

#include "nerve/Conversion/Passes.h"
#include "nerve/Dialect/Fold/IR/Fold.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace nerve {
#define GEN_PASS_DEF_CONVERTFOLDTOSCF
#include "nerve/Conversion/Passes.h.inc"
} // namespace nerve

using namespace mlir;

/// `fold` replaced by the scf.for of its bounds, init values and body.
static void lowerFold(nerve::fold::ForOp fold) {
  OpBuilder b(fold);
  auto loop = scf::ForOp::create(b, fold.getLoc(), fold.getLowerBound(), fold.getUpperBound(),
                                 fold.getStep(), fold.getInitArgs());
  loop.getRegion().takeBody(fold.getRegion());
  Operation *yield = loop.getBody()->getTerminator();
  b.setInsertionPoint(yield);
  scf::YieldOp::create(b, yield->getLoc(), yield->getOperands());
  yield->erase();
  fold.replaceAllUsesWith(loop.getResults());
  fold.erase();
}

namespace {
struct ConvertFoldToSCFPass : nerve::impl::ConvertFoldToSCFBase<ConvertFoldToSCFPass> {
  void runOnOperation() override {
    SmallVector<nerve::fold::ForOp> folds;
    getOperation()->walk([&](nerve::fold::ForOp fold) { folds.push_back(fold); });
    for (nerve::fold::ForOp fold : folds)
      lowerFold(fold);
  }
};
} // namespace
