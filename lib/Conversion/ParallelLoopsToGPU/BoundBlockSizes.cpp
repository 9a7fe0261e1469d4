//===- BoundBlockSizes.cpp - the most threads a kernel's launches ask for --===//
//
// ptxas gives a kernel as many registers as it likes (up to 255 a thread)
// unless the PTX bounds its block size; a launch with more threads than the
// registers allow then fails. Kernels whose block size is chosen at run
// time (row programs: 32 to 1024 threads by the row width) would need
// either luck or that bound. Here the host code's integer ranges give each
// launch's block size an upper bound; a kernel whose launches are all
// bounded gets `nvvm.maxntid` with the largest, so that ptxas keeps it
// within the registers its largest block can have (64 a thread at 1024).
// Kernels with a constant block size already carry it (`known_block_size`).
//
//===----------------------------------------------------------------------===//

#include "nerve/Conversion/Passes.h"

#include "mlir/Analysis/DataFlow/ConstantPropagationAnalysis.h"
#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Analysis/DataFlow/IntegerRangeAnalysis.h"
#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/DenseMap.h"

namespace nerve {
#define GEN_PASS_DEF_BOUNDBLOCKSIZES
#include "nerve/Conversion/Passes.h.inc"
} // namespace nerve

using namespace mlir;

namespace {

/// CUDA's limit on the threads of a block, in each dimension and in all.
constexpr int64_t kMaxBlockThreads = 1024;

struct BoundBlockSizes : nerve::impl::BoundBlockSizesBase<BoundBlockSizes> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    DataFlowSolver solver;
    solver.load<dataflow::DeadCodeAnalysis>();
    solver.load<dataflow::SparseConstantPropagation>();
    solver.load<dataflow::IntegerRangeAnalysis>();
    if (failed(solver.initializeAndRun(module)))
      return signalPassFailure();

    // The largest value `v` can take, if the ranges know one.
    auto upperBound = [&](Value v) -> std::optional<int64_t> {
      auto *lattice = solver.lookupState<dataflow::IntegerValueRangeLattice>(v);
      if (!lattice || lattice->getValue().isUninitialized())
        return std::nullopt;
      const APInt &umax = lattice->getValue().getValue().umax();
      if (umax.getActiveBits() > 32)
        return std::nullopt;
      return static_cast<int64_t>(umax.getZExtValue());
    };

    // Per kernel: the largest block size in each dimension over its
    // launches; none when one of them is unbounded.
    llvm::DenseMap<SymbolRefAttr, std::optional<std::array<int64_t, 3>>> bounds;
    module.walk([&](gpu::LaunchFuncOp launch) {
      gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
      std::optional<std::array<int64_t, 3>> here = std::array<int64_t, 3>{};
      for (auto [i, size] : llvm::enumerate(std::array<Value, 3>{block.x, block.y, block.z})) {
        std::optional<int64_t> ub = upperBound(size);
        if (!ub) {
          here.reset();
          break;
        }
        (*here)[i] = *ub;
      }
      auto [it, inserted] = bounds.try_emplace(launch.getKernel(), here);
      if (inserted || !it->second)
        return;
      if (!here) {
        it->second.reset();
        return;
      }
      for (int i = 0; i < 3; ++i)
        (*it->second)[i] = std::max((*it->second)[i], (*here)[i]);
    });

    auto *ctx = &getContext();
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>())
      for (auto kernel : gpuModule.getOps<gpu::GPUFuncOp>()) {
        if (!kernel.isKernel() || kernel.getKnownBlockSizeAttr())
          continue;
        auto symbol = SymbolRefAttr::get(gpuModule.getNameAttr(),
                                         {FlatSymbolRefAttr::get(kernel.getNameAttr())});
        auto found = bounds.find(symbol);
        if (found == bounds.end() || !found->second)
          continue;
        std::array<int64_t, 3> most = *found->second;
        // A launch beyond CUDA's limits fails whatever the registers.
        if (llvm::any_of(most, [](int64_t n) { return n < 1 || n > kMaxBlockThreads; }) ||
            most[0] * most[1] * most[2] > kMaxBlockThreads)
          continue;
        kernel->setAttr("nvvm.maxntid",
                        DenseI32ArrayAttr::get(ctx, {static_cast<int32_t>(most[0]),
                                                     static_cast<int32_t>(most[1]),
                                                     static_cast<int32_t>(most[2])}));
      }
  }
};

} // namespace
