//===- PTXPipeline.cpp - nerve-to-ptx ------------------------------------===//

#include "nerve/Pipelines/Pipelines.h"

#include "nerve/Conversion/Passes.h"
#include "nerve/Dialect/GPU/Transforms/Passes.h"
#include "nerve/Target/PTX/Passes.h"

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

void nerve::buildNerveToNVVMPipeline(OpPassManager &pm, const NerveToPTXOptions &options,
                                     bool withDeviceCode) {
  LoopsStage loops;
  loops.neuronTimeBlock = options.neuronTimeBlock;
  loops.shapes.assign(options.shapes.begin(), options.shapes.end());
  if (options.tensorCores)
    loops.tensorCoreChip = chipProfile(options.chip).name.str();
  loops.tf32 = options.tf32;
  buildNerveToLoopsPipeline(pm, loops);

  // Parallel loops onto threads, then kernels out into gpu.modules, all
  // launches of a call on one stream.
  const ChipProfile &chip = chipProfile(options.chip);
  pm.addPass(createFuseKernelLoops());
  SelectGPUStrategyOptions selection;
  selection.blockSize = options.blockSize;
  // Row programs stage rows up to the chip's opt-in limit and split them
  // over clusters where it has them.
  selection.chip = chip.name.str();
  pm.addPass(createSelectGPUStrategy(selection));
  pm.addPass(createParallelLoopsToGPU());
  pm.addPass(createConvertGPUMapToGPU());
  // The folds no strategy split run in order in their threads.
  pm.addPass(createConvertFoldToSCF());
  // Launches the static sizes rule out are not compiled.
  pm.addNestedPass<func::FuncOp>(createFoldLaunchChoices());
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createNameKernels());
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());

  std::optional<std::string> libdevice = findLibdevice(options.libdevice);
  // Each module's target: the chip's, or its architecture-specific one for
  // kernels with wgmma. No explicit PTX version: LLVM picks the one each
  // chip needs (a fixed old default such as +ptx60 aborts for sm_80 and
  // later).
  AttachNVVMTargetsOptions target;
  target.chip = chip.name.str();
  target.optLevel = options.optLevel;
  target.fastFlag = options.fastMath;
  if (libdevice)
    target.linkLibs.push_back(*libdevice);
  pm.addPass(createAttachNVVMTargets(target));

  // Device code: math first (no library calls left unresolved), then NVVM.
  // Which kernels may use approximate math depends on how they are launched
  // (none with exact math).
  if (!options.exactMath)
    pm.addPass(createHalfStorageMath());
  if (withDeviceCode)
    buildNerveDeviceCodePipeline(pm.nest<gpu::GPUModuleOp>(), options.chip, libdevice.has_value());
}

void nerve::buildNerveDeviceCodePipeline(OpPassManager &device, GpuChip chipName, bool libdevice) {
  const ChipProfile &chip = chipProfile(chipName);
  if (chip.programmaticDependentLaunch)
    device.addPass(createGridDependencies());
  device.addPass(createOccupancyHints());
  LowerGPUMathOptions math;
  math.libdevice = libdevice;
  device.addPass(createLowerGPUMath(math));
  device.addPass(createPairTruncations());
  device.addPass(createSCFToControlFlowPass());
  device.addPass(memref::createExpandStridedMetadataPass());
  device.addPass(createLowerAffinePass());
  device.addPass(createConvertNVGPUToNVVMPass());
  device.addPass(createConvertGpuOpsToNVVMOps());
  // NVVM ops that LLVM has no intrinsic for (wgmma) as PTX inline assembly.
  device.addPass(createConvertNVVMToLLVMPass());
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
