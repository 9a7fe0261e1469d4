//===- FoldLaunchChoices.cpp - launches the known sizes rule out ---------===//
//
// The mappings choose between launches at run time (by row width, block
// size, staging): a spec with dynamic sizes needs every alternative, but
// one whose sizes are static decides most of these choices at compile
// time. This pass folds the host code around the launches (their operands
// and the scf.if ops that choose between them), so that the alternatives
// the known sizes rule out are gone before outlining and never compiled.
// The launches' bodies are left alone.
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/GPU/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nerve {
#define GEN_PASS_DEF_FOLDLAUNCHCHOICES
#include "nerve/Dialect/GPU/Transforms/Passes.h.inc"
} // namespace nerve

using namespace mlir;

namespace {
struct FoldLaunchChoicesPass : nerve::impl::FoldLaunchChoicesBase<FoldLaunchChoicesPass> {
  void runOnOperation() override {
    // The host code: every op outside the launches' bodies.
    SmallVector<Operation *> host;
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op == getOperation())
        return WalkResult::advance();
      host.push_back(op);
      return isa<gpu::LaunchOp>(op) ? WalkResult::skip() : WalkResult::advance();
    });
    // Only folding and scf.if's own patterns (a constant condition keeps
    // one branch, an empty branch goes): nothing else of the host code
    // changes, so the kernels get the operands they got before.
    RewritePatternSet patterns(&getContext());
    scf::IfOp::getCanonicalizationPatterns(patterns, &getContext());
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    if (failed(applyOpPatternsGreedily(host, std::move(patterns), config)))
      return signalPassFailure();
  }
};
} // namespace
