//===- GridDependencies.cpp - kernels launched before the one ahead ends -===//
//
// Consecutive kernels of a call (a neuron's forward and backward, a split
// reduction's two launches) otherwise pay, between them, the first one's
// drain and the second one's launch. With programmatic dependent launch
// (sm_90), the second may be launched as the first one's blocks exit; its
// `griddepcontrol.wait`, at the very start of every kernel, holds it until
// the first has finished and its memory is visible: no kernel reads or
// writes memory before the one ahead of it is done, as in plain stream
// order. No kernel signals `launch_dependents` earlier: the next kernel's
// blocks would then take SM resources while this one runs (f32 LIF
// training at 1024 x 65536 on an H200: 0.587 ms against 0.548 without
// dependent launch, 0.548 with the wait alone).
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/GPU/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace nerve {
#define GEN_PASS_DEF_GRIDDEPENDENCIES
#include "nerve/Dialect/GPU/Transforms/Passes.h.inc"
} // namespace nerve

using namespace mlir;

namespace {
struct GridDependenciesPass : nerve::impl::GridDependenciesBase<GridDependenciesPass> {
  void runOnOperation() override {
    for (auto kernel : getOperation().getOps<gpu::GPUFuncOp>()) {
      if (!kernel.isKernel() || kernel.getBody().empty())
        continue;
      OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
      NVVM::GriddepcontrolOp::create(b, kernel.getLoc(), NVVM::GridDepActionKind::wait);
    }
  }
};
} // namespace
