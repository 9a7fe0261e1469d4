//===- PTXPipeline.cpp - nerve-to-ptx ------------------------------------===//

#include "nerve/Pipelines/Pipelines.h"

#include "nerve/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstdlib>

using namespace mlir;

const char *nerve::toString(GpuChip chip) {
  switch (chip) {
  case GpuChip::sm_80: return "sm_80";
  case GpuChip::sm_89: return "sm_89";
  case GpuChip::sm_90: return "sm_90";
  case GpuChip::sm_100: return "sm_100";
  }
  return "sm_90";
}

/// The most shared memory a block may opt into on `chip` (CUDA's
/// sharedMemPerBlockOptin): row programs stage rows this large.
static int64_t optInSharedBytes(nerve::GpuChip chip) {
  switch (chip) {
  case nerve::GpuChip::sm_80: return 163 * 1024;
  case nerve::GpuChip::sm_89: return 99 * 1024;
  case nerve::GpuChip::sm_90:
  case nerve::GpuChip::sm_100: return 227 * 1024;
  }
  return 48 * 1024;
}

std::optional<std::string> nerve::findLibdevice(StringRef option) {
  if (option == "none")
    return std::nullopt;
  if (!option.empty())
    return option.str();
  for (const char *env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *root = std::getenv(env)) {
      llvm::SmallString<256> path(root);
      llvm::sys::path::append(path, "nvvm", "libdevice", "libdevice.10.bc");
      if (llvm::sys::fs::exists(path))
        return std::string(path.str());
    }
  const char *fallback = "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc";
  if (llvm::sys::fs::exists(fallback))
    return std::string(fallback);
  return std::nullopt;
}

void nerve::buildNerveToPTXPipeline(OpPassManager &pm, const NerveToPTXOptions &options) {
  buildNerveToNVVMPipeline(pm, options);
  // Serialized before the host passes so that those walk a few gpu.binary
  // ops, not the whole device code.
  buildNerveSerializePTXPipeline(pm);
  buildNerveToHostLLVMPipeline(pm);
}

void nerve::buildNerveToNVVMPipeline(OpPassManager &pm, const NerveToPTXOptions &options) {
  buildNerveToLoopsPipeline(pm, options.neuronTimeBlock);

  // Parallel loops onto threads, then kernels out into gpu.modules, all
  // launches of a call on one stream.
  ParallelLoopsToGPUOptions mapping;
  mapping.blockSize = options.blockSize;
  mapping.sharedBytes = optInSharedBytes(options.chip);
  // Thread block clusters (and their distributed shared memory) came with
  // sm_90.
  mapping.clusterBlocks =
      options.chip == GpuChip::sm_90 || options.chip == GpuChip::sm_100 ? 8 : 0;
  pm.addPass(createParallelLoopsToGPU(mapping));
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createNameKernels());
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());

  std::optional<std::string> libdevice = findLibdevice(options.libdevice);
  GpuNVVMAttachTargetOptions target;
  target.chip = toString(options.chip);
  target.optLevel = options.optLevel;
  // No explicit PTX version: LLVM picks the one each chip needs (a fixed
  // old default such as +ptx60 aborts for sm_80 and later).
  target.features = "";
  target.fastFlag = options.fastMath;
  if (libdevice)
    target.linkLibs.push_back(*libdevice);
  pm.addPass(createGpuNVVMAttachTarget(target));

  // Device code: math first (no library calls left unresolved), then NVVM.
  // Which kernels may use approximate math depends on how they are launched.
  pm.addPass(createHalfStorageMath());
  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  // Programmatic dependent launch came with sm_90.
  if (options.chip == GpuChip::sm_90 || options.chip == GpuChip::sm_100)
    device.addPass(createGridDependencies());
  device.addPass(createOccupancyHints());
  LowerGPUMathOptions math;
  math.libdevice = libdevice.has_value();
  device.addPass(createLowerGPUMath(math));
  device.addPass(createPairTruncations());
  device.addPass(createSCFToControlFlowPass());
  device.addPass(memref::createExpandStridedMetadataPass());
  device.addPass(createLowerAffinePass());
  device.addPass(createConvertNVGPUToNVVMPass());
  device.addPass(createConvertGpuOpsToNVVMOps());
  device.addPass(createExternDynamicShared());
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  device.addPass(createReconcileUnrealizedCastsPass());
}

void nerve::buildNerveSerializePTXPipeline(OpPassManager &pm) {
  // PTX: assembly text, linked by the driver when loaded; the modules' code
  // generation runs concurrently when the context has threads.
  pm.addPass(createSerializeGPUModules());
  pm.addPass(createCheckPTX());
}

void nerve::buildNerveToHostLLVMPipeline(OpPassManager &pm) {
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}
