//===- ExternDynamicShared.cpp - dynamic shared memory as .extern --------===//
//
// convert-gpu-to-nvvm lowers gpu.dynamic_shared_memory to an internal,
// zero-sized global in the shared address space. The NVPTX backend demotes
// such a global to a function-local `.shared` array of size zero, which
// ptxas places among the static shared arrays: it then aliases them and is
// not the memory the launch sized. Made external, it is printed as
// `.extern .shared .align 16 .b8 name[];`, the dynamic shared memory.
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/GPU/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace nerve {
#define GEN_PASS_DEF_EXTERNDYNAMICSHARED
#include "nerve/Dialect/GPU/Transforms/Passes.h.inc"
} // namespace nerve

using namespace mlir;

namespace {
struct ExternDynamicSharedPass
    : nerve::impl::ExternDynamicSharedBase<ExternDynamicSharedPass> {
  void runOnOperation() override {
    constexpr unsigned kSharedAddressSpace = 3;
    for (auto global : getOperation().getOps<LLVM::GlobalOp>()) {
      auto array = llvm::dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
      if (global.getAddrSpace() != kSharedAddressSpace || !array || array.getNumElements() != 0 ||
          global.getInitializerRegion().getBlocks().size() != 0 || global.getValueAttr())
        continue;
      global.setLinkage(LLVM::Linkage::External);
    }
  }
};
} // namespace
