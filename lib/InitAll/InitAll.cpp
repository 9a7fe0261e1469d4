//===- InitAll.cpp - register nerve's dialects and passes -------------------===//

#include "nerve/InitAll.h"

#include "nerve/Conversion/Passes.h"
#include "nerve/Dialect/CPUMap/IR/CPUMap.h"
#include "nerve/Dialect/Fold/IR/Fold.h"
#include "nerve/Dialect/GPU/Transforms/Passes.h"
#include "nerve/Dialect/GPUMap/IR/GPUMap.h"
#include "nerve/Dialect/GPUMap/Transforms/Passes.h"
#include "nerve/Dialect/Neuron/IR/NeuronDialect.h"
#include "nerve/Dialect/Neuron/Transforms/Passes.h"
#include "nerve/Dialect/Tdim/IR/TdimDialect.h"
#include "nerve/Dialect/Tdim/Transforms/Passes.h"
#include "nerve/Pipelines/Pipelines.h"
#include "nerve/Target/PTX/Passes.h"
#include "nerve/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"

void nerve::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<tdim::TdimDialect, neuron::NeuronDialect, gpumap::GPUMapDialect,
                  cpumap::CPUMapDialect, fold::FoldDialect>();
  registry.insert<mlir::affine::AffineDialect, mlir::arith::ArithDialect,
                  mlir::cf::ControlFlowDialect, mlir::func::FuncDialect,
                  mlir::gpu::GPUDialect, mlir::index::IndexDialect,
                  mlir::LLVM::LLVMDialect, mlir::NVVM::NVVMDialect,
                  mlir::math::MathDialect, mlir::memref::MemRefDialect,
                  mlir::nvgpu::NVGPUDialect, mlir::omp::OpenMPDialect,
                  mlir::scf::SCFDialect, mlir::ub::UBDialect,
                  mlir::vector::VectorDialect>();
  // Interface models (convert-to-llvm, inliner, bufferization, NVVM target)
  // attach lazily, only to the dialects that get loaded.
  mlir::registerAllExtensions(registry);
  // How an #nvvm.target serializes a gpu.module to PTX.
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  mlir::registerGPUDialectTranslation(registry);
  // How a gpu.binary and its launches become LLVM IR (#gpu.select_object).
  mlir::gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  mlir::registerNVVMDialectTranslation(registry);
  // The CPU target's threads: omp.parallel and omp.wsloop through
  // OpenMPIRBuilder to calls into the OpenMP runtime.
  mlir::registerOpenMPDialectTranslation(registry);
}

void nerve::registerAllPasses() {
  mlir::registerAllPasses();
  tdim::registerTdimPasses();
  neuron::registerNeuronPasses();
  registerNerveConversionPasses();
  registerNerveGPUPasses();
  registerNerveGPUMapPasses();
  registerNervePTXPasses();
  registerNerveTransformsPasses();
  registerNervePipelines();
}
