//===- SerializeGPUModules.cpp - gpu.modules to PTX, concurrently --------===//
//
// Upstream's gpu-module-to-binary serializes one module after another; an
// entry with a forward and a backward kernel spends twice the code
// generation time it needs to. Serializing touches only the module it is
// given (and, with threading on, the context's locked uniquers), so the
// modules are serialized in parallel and the IR is changed afterwards, in
// order, on one thread.
//
//===----------------------------------------------------------------------===//

#include "nerve/Target/PTX/Passes.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Threading.h"

#include <mutex>
#include <optional>

namespace nerve {
#define GEN_PASS_DEF_SERIALIZEGPUMODULES
#include "nerve/Target/PTX/Passes.h.inc"
} // namespace nerve

using namespace mlir;

namespace {
struct SerializeGPUModulesPass
    : nerve::impl::SerializeGPUModulesBase<SerializeGPUModulesPass> {
  void runOnOperation() override {
    ModuleOp top = getOperation();
    auto modules = llvm::to_vector(top.getOps<gpu::GPUModuleOp>());
    if (modules.empty())
      return;

    // Targets may ask for the symbol table: built once, under a lock.
    std::mutex tableMutex;
    std::optional<SymbolTable> table;
    auto lazyTable = [&]() -> SymbolTable * {
      std::lock_guard<std::mutex> lock(tableMutex);
      if (!table)
        table.emplace(top);
      return &*table;
    };
    gpu::TargetOptions options(/*toolkitPath=*/"", /*librariesToLink=*/{}, /*cmdOptions=*/"",
                               /*elfSection=*/"", gpu::CompilationTarget::Assembly, lazyTable);

    // One slot per (module, target), filled concurrently.
    struct Job {
      gpu::GPUModuleOp module;
      gpu::TargetAttrInterface target;
      std::optional<SmallVector<char, 0>> object;
    };
    std::vector<Job> jobs;
    for (gpu::GPUModuleOp module : modules) {
      if (!module.getTargetsAttr() || module.getTargetsAttr().empty()) {
        module.emitError("the module has no target attributes");
        return signalPassFailure();
      }
      for (Attribute attr : module.getTargetsAttr()) {
        auto target = llvm::dyn_cast<gpu::TargetAttrInterface>(attr);
        if (!target) {
          module.emitError("a target attribute of the module cannot serialize it");
          return signalPassFailure();
        }
        jobs.push_back({module, target, std::nullopt});
      }
    }
    // Failures are collected, not returned early: every job's diagnostics
    // are reported.
    (void)failableParallelForEach(&getContext(), jobs, [&](Job &job) {
      job.object = job.target.serializeToObject(job.module, options);
      return success(job.object.has_value());
    });

    size_t next = 0;
    for (gpu::GPUModuleOp module : modules) {
      SmallVector<Attribute> objects;
      for (size_t i = 0; i < module.getTargetsAttr().size(); ++i, ++next) {
        Job &job = jobs[next];
        if (!job.object) {
          module.emitError("an error happened while serializing the module");
          return signalPassFailure();
        }
        Attribute object = job.target.createObject(module, *job.object, options);
        if (!object) {
          module.emitError("an error happened while creating the object");
          return signalPassFailure();
        }
        objects.push_back(object);
      }
      OpBuilder builder(module);
      builder.setInsertionPointAfter(module);
      auto handler = llvm::dyn_cast_or_null<gpu::OffloadingLLVMTranslationAttrInterface>(
          module.getOffloadingHandlerAttr());
      gpu::BinaryOp::create(builder, module.getLoc(), module.getName(), handler,
                            builder.getArrayAttr(objects));
      module->erase();
    }
  }
};
} // namespace
