//===- CPUPipeline.cpp - nerve-to-loops and nerve-to-cpu -----------------===//

#include "nerve/Pipelines/Pipelines.h"

#include "nerve/Conversion/Passes.h"
#include "nerve/Dialect/GPUMap/Transforms/Passes.h"
#include "nerve/Dialect/Neuron/Transforms/Passes.h"
#include "nerve/Dialect/Tdim/Transforms/Passes.h"
#include "nerve/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void nerve::buildNerveToLoopsPipeline(OpPassManager &pm, const LoopsStage &stage) {
  pm.addPass(neuron::createNeuronGeneralize());
  ConvertNeuronToTdimOptions neurons;
  neurons.timeBlock = stage.neuronTimeBlock;
  pm.addPass(createConvertNeuronToTdim(neurons));
  tdim::TdimDecomposeOptions decompose;
  decompose.storeExponentials = stage.storeExponentials;
  pm.addPass(tdim::createTdimDecompose(decompose));
  pm.addPass(tdim::createTdimFuseElementwise());
  pm.addPass(tdim::createTdimFuseContractEpilogue());
  pm.addPass(createCanonicalizerPass());
  if (!stage.tensorCoreChip.empty()) {
    SelectContractTilingOptions tiling;
    tiling.chip = stage.tensorCoreChip;
    tiling.tf32 = stage.tf32;
    pm.addPass(createSelectContractTiling(tiling));
  }
  pm.addPass(createConvertTdimToSCF());
  if (!stage.shapes.empty()) {
    SpecializeShapesOptions specialize;
    specialize.shapes = llvm::to_vector(stage.shapes);
    pm.addPass(createSpecializeShapes(specialize));
  }
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void nerve::buildNerveToCPUPipeline(OpPassManager &pm, const NerveToCPUOptions &options) {
  // One step at a time: the CPU's prefetchers follow the rows, and loads
  // issued ahead only cost registers.
  // Rows stay in the cache between softmax's passes: its exponentials are
  // stored once, not computed again.
  LoopsStage loops;
  loops.neuronTimeBlock = options.neuronTimeBlock ? options.neuronTimeBlock : 1;
  loops.shapes.assign(options.shapes.begin(), options.shapes.end());
  loops.storeExponentials = true;
  buildNerveToLoopsPipeline(pm, loops);
  // Folds run in order on the host: their merge regions go.
  pm.addPass(createConvertFoldToSCF());
  // Each outermost parallel loop becomes one loop of tasks (decided, then
  // applied), which OpenMP runs on the runtime's threads.
  SelectCPUStrategyOptions select;
  select.profile = options.profile;
  pm.addPass(createSelectCPUStrategy(select));
  pm.addPass(createApplyCPUStrategy());
  // f32 exp, log, tanh, erf as arithmetic, so the loops holding them
  // vectorise.
  pm.addPass(createPolynomialMath());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createConvertSCFToOpenMPPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // bf16 conversions become integer arithmetic: the host has no bf16 unit.
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  // Before scf-to-cf: a task's body is a memref.alloca_scope, which must
  // keep one block until it is lowered.
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  // The loops made from parallel dimensions vectorise without run-time
  // alias checks.
  pm.addPass(createParallelAccessGroups());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertOpenMPToLLVMPass());
  // rsqrt is no libm function: 1 / sqrt. LLVM's intrinsics first (floor
  // and fma in the polynomials vectorise); functions it has none for (erf,
  // tanh of f64, ...) call libm.
  math::MathExpandOpsPassOptions expandMath;
  expandMath.opMnemonics = {"rsqrt"};
  pm.addPass(math::createMathExpandOpsPass(expandMath));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createAttachLoopAnnotations());
  pm.addPass(createCanonicalizerPass());
}

void nerve::registerNervePipelines() {
  PassPipelineRegistration<NerveToLoopsOptions>(
      "nerve-to-loops",
      "Lowers nerve's dialects to loop nests over memrefs (shared by every target)",
      [](OpPassManager &pm, const NerveToLoopsOptions &options) {
        LoopsStage loops;
        loops.neuronTimeBlock = options.neuronTimeBlock;
        loops.shapes.assign(options.shapes.begin(), options.shapes.end());
        loops.storeExponentials = options.storeExponentials;
        buildNerveToLoopsPipeline(pm, loops);
      });
  PassPipelineRegistration<NerveToCPUOptions>(
      "nerve-to-cpu", "Lowers a nerve spec to the LLVM dialect for the host CPU",
      [](OpPassManager &pm, const NerveToCPUOptions &options) {
        buildNerveToCPUPipeline(pm, options);
      });
  PassPipelineRegistration<NerveToPTXOptions>(
      "nerve-to-ptx",
      "Lowers a nerve spec to host LLVM code launching PTX kernels through nerve's runtime",
      [](OpPassManager &pm, const NerveToPTXOptions &options) {
        buildNerveToPTXPipeline(pm, options);
      });
  PassPipelineRegistration<NerveToPTXOptions>(
      "nerve-to-nvvm",
      "nerve-to-ptx's first part: kernels in gpu.modules in the NVVM dialect, before PTX",
      [](OpPassManager &pm, const NerveToPTXOptions &options) {
        buildNerveToNVVMPipeline(pm, options);
      });
}
