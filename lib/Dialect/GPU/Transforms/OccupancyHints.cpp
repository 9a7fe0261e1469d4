//===- OccupancyHints.cpp - blocks per SM from the mapping to ptxas -------===//
//
// The loop mapping decides some kernels' occupancy (a cluster's row program:
// blocks of 256 threads whose shared memory lets several share an SM) but
// builds a gpu.launch, whose attributes kernel outlining drops. It leaves
// the number on an op of the body instead (kBlocksPerSMAttr); this pass
// moves it onto the outlined kernel as `nvvm.minctasm` (`.minnctapersm`),
// from which ptxas sets the kernel's register budget.
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/GPU/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace nerve {
#define GEN_PASS_DEF_OCCUPANCYHINTS
#include "nerve/Dialect/GPU/Transforms/Passes.h.inc"
} // namespace nerve

using namespace mlir;

namespace {
struct OccupancyHintsPass : nerve::impl::OccupancyHintsBase<OccupancyHintsPass> {
  void runOnOperation() override {
    for (auto kernel : getOperation().getOps<gpu::GPUFuncOp>()) {
      int64_t blocks = 0;
      kernel.walk([&](Operation *op) {
        if (auto hint = op->getAttrOfType<IntegerAttr>(nerve::kBlocksPerSMAttr)) {
          blocks = std::max(blocks, hint.getInt());
          op->removeAttr(nerve::kBlocksPerSMAttr);
        }
      });
      if (blocks > 0 && kernel.isKernel())
        kernel->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                        IntegerAttr::get(IntegerType::get(&getContext(), 32), blocks));
    }
  }
};
} // namespace
