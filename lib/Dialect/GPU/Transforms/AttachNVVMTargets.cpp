//===- AttachNVVMTargets.cpp - nerve-attach-nvvm-targets ------------------===//
//
// Each gpu.module's #nvvm.target, chosen from its kernels' content: a
// kernel with wgmma compiles for sm_90a (PTX's architecture-specific
// target), the others stay portable (sm_90 PTX also runs on later chips).
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/GPU/Transforms/Passes.h"

#include "nerve/Target/ChipOption.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace nerve {
#define GEN_PASS_DEF_ATTACHNVVMTARGETS
#include "nerve/Dialect/GPU/Transforms/Passes.h.inc"
} // namespace nerve

using namespace mlir;

namespace {

bool usesArchSpecificOps(gpu::GPUModuleOp module) {
  return module
      .walk([](Operation *op) {
        return op->getName().getStringRef().starts_with("nvvm.wgmma.") ? WalkResult::interrupt()
                                                                        : WalkResult::advance();
      })
      .wasInterrupted();
}

struct AttachNVVMTargets : nerve::impl::AttachNVVMTargetsBase<AttachNVVMTargets> {
  using Base::Base;

  void runOnOperation() override {
    const nerve::ChipProfile *chipProfile = nerve::chipOption(getOperation(), chip);
    if (!chipProfile)
      return signalPassFailure();
    const nerve::ChipProfile &profile = *chipProfile;
    MLIRContext *ctx = &getContext();
    DictionaryAttr flags;
    if (fastFlag)
      flags = DictionaryAttr::get(ctx, {NamedAttribute(StringAttr::get(ctx, "fast"),
                                                       UnitAttr::get(ctx))});
    ArrayAttr link;
    if (!linkLibs.empty())
      link = ArrayAttr::get(ctx, llvm::map_to_vector(linkLibs, [&](const std::string &l) {
                              return Attribute(StringAttr::get(ctx, l));
                            }));
    getOperation().walk([&](gpu::GPUModuleOp module) {
      StringRef name = profile.name;
      if (usesArchSpecificOps(module)) {
        if (profile.archSpecificName.empty()) {
          module.emitError() << "kernel uses wgmma, which " << profile.name << " lacks";
          return signalPassFailure();
        }
        name = profile.archSpecificName;
      }
      auto target = NVVM::NVVMTargetAttr::get(ctx, optLevel, "nvptx64-nvidia-cuda", name, "",
                                              flags, link);
      module.setTargetsAttr(ArrayAttr::get(ctx, {target}));
    });
  }
};

} // namespace
