//===- TdimCanonicalize.cpp - tdim canonicalizations ---------------------===//
//
// Rewrites that simplify tdim programs without changing what they compute:
// a relayout of a relayout, and writes to intermediate tensors nobody
// reads. (Fusing elementwise producers into their consumers is a pass of
// its own, tdim-fuse-elementwise.)
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/Tdim/IR/TdimOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace nerve::tdim;

/// Whether any op strictly between `first` and `last` (same block) may write
/// memory, which would make reordering reads across it unsafe.
bool nerve::tdim::writesBetween(Operation *first, Operation *last) {
  for (Operation *op = first->getNextNode(); op && op != last; op = op->getNextNode()) {
    if (isMemoryEffectFree(op) || llvm::isa<AllocOp>(op))
      continue;
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects || effects.hasEffect<MemoryEffects::Write>())
      return true;
  }
  return false;
}

/// The single op writing `tensor` (a tdim.alloc) before `reader`, when the
/// only other use of `tensor` is `reader` itself.
Operation *nerve::tdim::soleWriterBefore(Value tensor, Operation *reader) {
  if (!tensor.getDefiningOp<AllocOp>())
    return nullptr;
  Operation *writer = nullptr;
  for (Operation *user : tensor.getUsers()) {
    if (user == reader)
      continue;
    if (writer)
      return nullptr;
    writer = user;
  }
  if (!writer || writer->getBlock() != reader->getBlock() ||
      !writer->isBeforeInBlock(reader))
    return nullptr;
  return writer;
}

namespace {

/// relayout(%a -> %t = tdim.alloc) ; relayout(%t -> %b)  ->  relayout(%a -> %b)
struct RelayoutOfRelayout : OpRewritePattern<RelayoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RelayoutOp op, PatternRewriter &rewriter) const override {
    auto first = llvm::dyn_cast_or_null<RelayoutOp>(soleWriterBefore(op.getInput(), op));
    if (!first || writesBetween(first, op) || first.getInput() == op.getOutput())
      return failure();
    Value mid = op.getInput();
    RelayoutOp::create(rewriter, op.getLoc(), first.getInput(), op.getOutput());
    rewriter.eraseOp(op);
    rewriter.eraseOp(first);
    if (mid.use_empty())
      rewriter.eraseOp(mid.getDefiningOp());
    return success();
  }
};

/// A tdim.alloc that is only ever written: drop the writes and the alloc.
struct EraseWriteOnlyAlloc : OpRewritePattern<AllocOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AllocOp alloc, PatternRewriter &rewriter) const override {
    SmallVector<Operation *> writers;
    for (OpOperand &use : alloc->getUses()) {
      Operation *user = use.getOwner();
      bool writeOnly = false;
      if (auto m = dyn_cast<MapOp>(user))
        writeOnly = use.getOperandNumber() >= m.getInputs().size() &&
                    !llvm::is_contained(m.getInputs(), alloc.getResult());
      else if (auto s = dyn_cast<StoreOp>(user))
        writeOnly = use.getOperandNumber() == 1;
      else if (isa<RelayoutOp, BroadcastOp, SoftmaxOp, LogSoftmaxOp>(user))
        writeOnly = user->getOperand(1) == alloc.getResult() &&
                    user->getOperand(0) != alloc.getResult();
      if (!writeOnly)
        return failure();
      // A map with several outputs still writes the others.
      if (auto m = dyn_cast<MapOp>(user); m && m.getOutputs().size() != 1)
        return failure();
      writers.push_back(user);
    }
    for (Operation *w : writers)
      rewriter.eraseOp(w);
    rewriter.eraseOp(alloc);
    return success();
  }
};

} // namespace

void RelayoutOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                             MLIRContext *ctx) {
  results.add<RelayoutOfRelayout>(ctx);
}

void AllocOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *ctx) {
  results.add<EraseWriteOnlyAlloc>(ctx);
}
