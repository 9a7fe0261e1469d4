//===- ParallelAccessGroups.cpp - nerve-parallel-access-groups ------------===//
//
// LLVM's parallel-loop metadata comes in two halves: the loop's
// `llvm.loop.parallel_accesses` (an `llvm.loop_annotation` on the scf.for,
// which SCF's lowering moves to the back edge) and `llvm.access.group` on
// each memory access it covers. Lowering memrefs loses track of which loop
// an access was in, so this pass adds the second half once accesses are
// LLVM ops and loops are still scf.for.
//
//===----------------------------------------------------------------------===//

#include "nerve/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMInterfaces.h"

namespace nerve {
#define GEN_PASS_DEF_PARALLELACCESSGROUPS
#include "nerve/Transforms/Passes.h.inc"
} // namespace nerve

using namespace mlir;

namespace {
struct ParallelAccessGroups : nerve::impl::ParallelAccessGroupsBase<ParallelAccessGroups> {
  void runOnOperation() override {
    getOperation().walk([](scf::ForOp loop) {
      auto annotation = loop->getAttrOfType<LLVM::LoopAnnotationAttr>("llvm.loop_annotation");
      if (!annotation || annotation.getParallelAccesses().empty())
        return;
      ArrayRef<LLVM::AccessGroupAttr> groups = annotation.getParallelAccesses();
      loop.getBody()->walk([&](LLVM::AccessGroupOpInterface access) {
        SmallVector<Attribute> all;
        if (ArrayAttr existing = access.getAccessGroupsOrNull())
          llvm::append_range(all, existing);
        for (LLVM::AccessGroupAttr g : groups)
          if (!llvm::is_contained(all, g))
            all.push_back(g);
        access.setAccessGroups(ArrayAttr::get(loop.getContext(), all));
      });
    });
  }
};
} // namespace
