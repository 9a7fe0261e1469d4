//===- PolynomialMath.cpp - nerve-polynomial-math -------------------------===//
//
// libm's f32 functions are calls LLVM cannot vectorise; upstream's
// polynomial approximations are arithmetic it can. Upstream provides them
// as patterns only, so this pass applies them to the functions nerve's
// kernels use.
//
//===----------------------------------------------------------------------===//

#include "nerve/Transforms/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nerve {
#define GEN_PASS_DEF_POLYNOMIALMATH
#include "nerve/Transforms/Passes.h.inc"
} // namespace nerve

using namespace mlir;

namespace {
struct PolynomialMath : nerve::impl::PolynomialMathBase<PolynomialMath> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      // Not log and log2: upstream's take subnormal arguments as the
      // smallest normal number (log(1e-42) would be -87.3, not -96.7).
      return llvm::is_contained({"math.exp", "math.expm1", "math.log1p", "math.tanh", "math.erf"},
                                name);
    });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
