//===- AttachLoopAnnotations.cpp - nerve-attach-loop-annotations ----------===//
//
// SCF's lowering carries a loop's annotation to its back edge as the
// discardable `llvm.loop_annotation`; the LLVM dialect's branches take it
// as their inherent `loop_annotation`, the only one LLVM IR translation
// reads. This pass moves the one into the other.
//
//===----------------------------------------------------------------------===//

#include "nerve/Transforms/Passes.h"

namespace nerve {
#define GEN_PASS_DEF_ATTACHLOOPANNOTATIONS
#include "nerve/Transforms/Passes.h.inc"
} // namespace nerve

using namespace mlir;

namespace {
constexpr StringLiteral kDiscardableName = "llvm.loop_annotation";

template <typename BranchOp>
void attach(BranchOp branch) {
  auto annotation = branch->template getAttrOfType<LLVM::LoopAnnotationAttr>(kDiscardableName);
  if (!annotation)
    return;
  branch->removeAttr(kDiscardableName);
  if (!branch.getLoopAnnotationAttr())
    branch.setLoopAnnotationAttr(annotation);
}

struct AttachLoopAnnotations : nerve::impl::AttachLoopAnnotationsBase<AttachLoopAnnotations> {
  void runOnOperation() override {
    getOperation().walk([](Operation *op) {
      if (auto br = dyn_cast<LLVM::BrOp>(op))
        attach(br);
      else if (auto condBr = dyn_cast<LLVM::CondBrOp>(op))
        attach(condBr);
    });
  }
};
} // namespace
