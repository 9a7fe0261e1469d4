//===- HalfStorageMath.cpp - approximate f32 math for 16-bit data -------===//
//
// A kernel that loads and stores only f16/bf16 computes in f32 and rounds
// every result to 16 bits (2^-11 relative); IEEE division and the accurate
// exp/log/log1p/tanh cost a dozen or more instructions per element, which
// bound such kernels (16-bit maps ran at 72-77% of the copy bandwidth where
// f32 maps ran at 95-98%). Their approximate forms err by a few f32 ulps
// (log1p 2^-17 at most), far below the rounding that follows, so these
// kernels get them (`afn`). Their f32 additions, subtractions and
// multiplications may also contract into fused multiply-adds (`contract`),
// which round once instead of twice, as CUDA compilers do by default.
//
// Scratch buffers the host code allocates for its launches alone (a row's
// maximum and sum between the kernels of a softmax) are f32 but never seen
// by the user: they do not keep a kernel exact. Nor does an f32 scalar the
// kernel only reads (PLIF's weight): every element's result still comes
// from 16-bit data (docs/decisions.md).
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/GPU/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/DenseMap.h"

namespace nerve {
#define GEN_PASS_DEF_HALFSTORAGEMATH
#include "nerve/Dialect/GPU/Transforms/Passes.h.inc"
} // namespace nerve

using namespace mlir;

namespace {

/// Whether `value` is a device buffer the host allocates, passes to kernels
/// and frees, and nothing else: no one outside nerve's launches sees it
/// (the host's checks of a launch's buffers read their address and strides
/// alone).
bool isLaunchScratch(Value value) {
  if (!value.getDefiningOp<gpu::AllocOp>())
    return false;
  return llvm::all_of(value.getUsers(), [](Operation *user) {
    return isa<gpu::LaunchFuncOp, gpu::DeallocOp, gpu::MemsetOp, memref::ExtractStridedMetadataOp,
               memref::ExtractAlignedPointerAsIndexOp>(user);
  });
}

/// For every launched kernel, which of its arguments are launch scratch in
/// every launch of it.
llvm::DenseMap<SymbolRefAttr, llvm::SmallVector<bool>> findScratchArguments(ModuleOp module) {
  llvm::DenseMap<SymbolRefAttr, llvm::SmallVector<bool>> scratch;
  module.walk([&](gpu::LaunchFuncOp launch) {
    auto operands = launch.getKernelOperands();
    auto &flags = scratch.try_emplace(launch.getKernel(), operands.size(), true).first->second;
    if (flags.size() != operands.size())
      flags.assign(operands.size(), false); // mismatched launches: trust none
    for (auto [index, operand] : llvm::enumerate(operands))
      flags[index] = flags[index] && isLaunchScratch(operand);
  });
  return scratch;
}

/// Whether `arg` is a scalar parameter the kernel only reads (PLIF's
/// weight): the same value for every element, not the element data whose
/// precision decides the kernel's.
bool isReadOnlyScalar(BlockArgument arg, MemRefType type) {
  return type.getRank() == 0 &&
         llvm::all_of(arg.getUsers(), [](Operation *user) { return isa<memref::LoadOp>(user); });
}

/// Whether every floating-point buffer `kernel` takes, scratch and
/// read-only scalars aside, is 16-bit (and it takes at least one).
bool onlyHalfStorage(gpu::GPUFuncOp kernel, ArrayRef<bool> scratch) {
  bool any = false;
  for (auto [index, type] : llvm::enumerate(kernel.getArgumentTypes())) {
    auto memref = dyn_cast<MemRefType>(type);
    if (!memref || !isa<FloatType>(memref.getElementType()))
      continue;
    if ((index < scratch.size() && scratch[index]) ||
        isReadOnlyScalar(kernel.getArgument(index), memref))
      continue;
    if (memref.getElementTypeBitWidth() > 16)
      return false;
    any = true;
  }
  return any;
}

/// Adds `flag` to `op`'s fast-math flags.
void addFlag(Operation *op, arith::FastMathFlags flag) {
  auto fm = cast<arith::ArithFastMathInterface>(op);
  auto flags = fm.getFastMathFlagsAttr().getValue() | flag;
  op->setAttr(fm.getFastMathAttrName(), arith::FastMathFlagsAttr::get(op->getContext(), flags));
}

void approximate(gpu::GPUFuncOp kernel) {
  kernel.walk([](Operation *op) {
    if (op->getNumResults() != 1 || !op->getResult(0).getType().isF32())
      return;
    if (isa<arith::DivFOp, math::ExpOp, math::LogOp, math::Log2Op, math::Log10Op, math::Log1pOp,
            math::TanhOp>(op))
      addFlag(op, arith::FastMathFlags::afn);
    else if (isa<arith::AddFOp, arith::SubFOp, arith::MulFOp>(op))
      addFlag(op, arith::FastMathFlags::contract);
  });
}

struct HalfStorageMath : nerve::impl::HalfStorageMathBase<HalfStorageMath> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto scratch = findScratchArguments(module);
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>())
      for (auto kernel : gpuModule.getOps<gpu::GPUFuncOp>()) {
        if (!kernel.isKernel())
          continue;
        auto symbol = SymbolRefAttr::get(gpuModule.getNameAttr(),
                                         {FlatSymbolRefAttr::get(kernel.getNameAttr())});
        auto found = scratch.find(symbol);
        if (onlyHalfStorage(kernel, found == scratch.end() ? ArrayRef<bool>() : found->second))
          approximate(kernel);
      }
  }
};

} // namespace
