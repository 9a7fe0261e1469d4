//===- NameKernels.cpp - one name per outlined kernel ---------------------===//
//
// Outlining keeps the function name for every kernel of an entry; profilers
// and error messages show that name only, so each kernel takes its module's
// (already unique) name.
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/GPU/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace nerve {
#define GEN_PASS_DEF_NAMEKERNELS
#include "nerve/Dialect/GPU/Transforms/Passes.h.inc"
} // namespace nerve

using namespace mlir;

namespace {
struct NameKernelsPass : nerve::impl::NameKernelsBase<NameKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Old (module, kernel) reference -> new one.
    llvm::DenseMap<std::pair<StringAttr, StringAttr>, SymbolRefAttr> renamed;
    module.walk([&](gpu::GPUModuleOp gpuModule) {
      auto kernels = llvm::to_vector(gpuModule.getOps<gpu::GPUFuncOp>());
      // A module with several kernels keeps their names: they differ already.
      if (kernels.size() != 1 || !kernels.front().isKernel())
        return;
      gpu::GPUFuncOp kernel = kernels.front();
      StringAttr moduleName = gpuModule.getSymNameAttr();
      if (kernel.getNameAttr() == moduleName)
        return;
      renamed[{moduleName, kernel.getNameAttr()}] = SymbolRefAttr::get(
          moduleName, {FlatSymbolRefAttr::get(moduleName)});
      SymbolTable::setSymbolName(kernel, moduleName);
    });
    if (renamed.empty())
      return;
    module.walk([&](gpu::LaunchFuncOp launch) {
      SymbolRefAttr ref = launch.getKernel();
      auto it = renamed.find({ref.getRootReference(), ref.getLeafReference()});
      if (it != renamed.end())
        launch.setKernelAttr(it->second);
    });
  }
};
} // namespace
