//===- OccupancyHints.cpp - blocks per SM from the mapping to ptxas -------===//
//
// The loop mapping decides some kernels' occupancy (a cluster's row program:
// blocks of 256 threads whose shared memory lets several share an SM) but
// builds a gpu.launch, whose attributes kernel outlining drops. It says so
// with a gpumap.occupancy_hint op in the body instead; this pass moves the
// number onto the outlined kernel as `nvvm.minctasm` (`.minnctapersm`), from
// which ptxas sets the kernel's register budget, and erases the op.
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/GPU/Transforms/Passes.h"
#include "nerve/Dialect/GPUMap/IR/GPUMap.h"

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
      SmallVector<nerve::gpumap::OccupancyHintOp> hints;
      kernel.walk([&](nerve::gpumap::OccupancyHintOp hint) {
        blocks = std::max<int64_t>(blocks, hint.getBlocksPerSm());
        hints.push_back(hint);
      });
      for (nerve::gpumap::OccupancyHintOp hint : hints)
        hint.erase();
      if (blocks > 0 && kernel.isKernel())
        kernel->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                        IntegerAttr::get(IntegerType::get(&getContext(), 32), blocks));
    }
  }
};
} // namespace
