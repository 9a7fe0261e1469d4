//===- GridDependencies.cpp - kernels that overlap their neighbours' ------===//
//
// Consecutive kernels of a call (a neuron's forward and backward, a split
// reduction's two launches) otherwise pay, between them, the drain of the
// first and the launch and ramp of the second. With programmatic dependent
// launch (sm_90), a kernel that has signalled `launch_dependents` lets the
// next one be scheduled early; that one's `wait` holds it until the first
// has finished and its memory is visible, so nothing it reads is early.
// Both at the very start of every kernel: no kernel reads or writes memory
// before its predecessor is done, as with plain stream order.
//
//===----------------------------------------------------------------------===//

#include "nerve/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace nerve {
#define GEN_PASS_DEF_GRIDDEPENDENCIES
#include "nerve/Conversion/Passes.h.inc"
} // namespace nerve

using namespace mlir;

namespace {
struct GridDependenciesPass : nerve::impl::GridDependenciesBase<GridDependenciesPass> {
  void runOnOperation() override {
    for (auto kernel : getOperation().getOps<gpu::GPUFuncOp>()) {
      if (!kernel.isKernel() || kernel.getBody().empty())
        continue;
      OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
      NVVM::GriddepcontrolOp::create(b, kernel.getLoc(),
                                     NVVM::GridDepActionKind::launch_dependents);
      NVVM::GriddepcontrolOp::create(b, kernel.getLoc(), NVVM::GridDepActionKind::wait);
    }
  }
};
} // namespace
