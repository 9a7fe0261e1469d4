//===- HalfStorageMath.cpp - approximate f32 math for 16-bit data -------===//
//
// A kernel that loads and stores only f16/bf16 computes in f32 and rounds
// every result to 16 bits (2^-11 relative); IEEE division and the accurate
// exp/log cost a dozen or more instructions per element, which bound such
// kernels (16-bit maps ran at 72-77% of the copy bandwidth where f32 maps
// ran at 95-98%). Their approximate forms err by a few f32 ulps, far below
// the rounding that follows, so these kernels get them (`afn`).
//
//===----------------------------------------------------------------------===//

#include "nerve/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace nerve {
#define GEN_PASS_DEF_HALFSTORAGEMATH
#include "nerve/Conversion/Passes.h.inc"
} // namespace nerve

using namespace mlir;

namespace {

/// Whether every floating-point buffer `kernel` takes is 16-bit (and it
/// takes at least one).
bool onlyHalfStorage(gpu::GPUFuncOp kernel) {
  bool any = false;
  for (Type type : kernel.getArgumentTypes()) {
    auto memref = dyn_cast<MemRefType>(type);
    if (!memref || !isa<FloatType>(memref.getElementType()))
      continue;
    if (memref.getElementTypeBitWidth() > 16)
      return false;
    any = true;
  }
  return any;
}

struct HalfStorageMath : nerve::impl::HalfStorageMathBase<HalfStorageMath> {
  void runOnOperation() override {
    for (auto kernel : getOperation().getOps<gpu::GPUFuncOp>()) {
      if (!kernel.isKernel() || !onlyHalfStorage(kernel))
        continue;
      kernel.walk([](Operation *op) {
        if (!isa<arith::DivFOp, math::ExpOp, math::LogOp, math::Log2Op, math::Log10Op>(op) ||
            !op->getResult(0).getType().isF32())
          return;
        auto fm = cast<arith::ArithFastMathInterface>(op);
        auto flags = fm.getFastMathFlagsAttr().getValue() | arith::FastMathFlags::afn;
        op->setAttr(fm.getFastMathAttrName(),
                    arith::FastMathFlagsAttr::get(op->getContext(), flags));
      });
    }
  }
};

} // namespace
