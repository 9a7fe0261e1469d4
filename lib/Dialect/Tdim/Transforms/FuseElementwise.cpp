//===- FuseElementwise.cpp - one pass over memory for elementwise chains -===//

#include "nerve/Dialect/Tdim/Transforms/Passes.h"

#include "nerve/Dialect/Tdim/IR/TdimOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nerve::tdim {
#define GEN_PASS_DEF_TDIMFUSEELEMENTWISE
#include "dialects/tdim/TdimPasses.h.inc"
} // namespace nerve::tdim

using namespace mlir;
using namespace nerve::tdim;

namespace {
struct TdimFuseElementwisePass
    : nerve::tdim::impl::TdimFuseElementwiseBase<TdimFuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateElementwiseFusionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
