//===- PairTruncations.cpp - f32 to bf16 two at a time ------------------===//
//
// On sm_90, ptxas selects `F2F.BF16.F32` for a scalar `cvt.rn.bf16.f32`: a
// conversion on the special-function unit, whose throughput a 16-bit
// kernel already spends on `ex2`, `lg2` and `rcp`. The pair form
// `cvt.rn.bf16x2.f32` is `F2FP.BF16.F32.PACK_AB`, one ALU instruction for
// two values. The 8-op chain of issue 8 (softplus, tanh) rounds two fused
// bf16 intermediates per element: 128 F2F beside 258 MUFU in its tile of
// 64 elements, where the f16 kernel has F2FP (ptxas packs a scalar
// `cvt.rn.f16.f32` with zero). LLVM makes the pair form itself only where
// two roundings feed one vector (a vector store); a truncation of a vector
// of two is split again where each lane is extended. So the round trips
// are paired here, by the pair form's intrinsic, and extended by bit moves
// (an extracted high half took ptxas a PRMT and a shift).
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/GPU/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace nerve {
#define GEN_PASS_DEF_PAIRTRUNCATIONS
#include "nerve/Dialect/GPU/Transforms/Passes.h.inc"
} // namespace nerve

using namespace mlir;

namespace {

/// A scalar f32 -> bf16 truncation with the default rounding whose result
/// is only extended again (a fused 16-bit intermediate). Where it is
/// stored, LLVM packs pairs that feed a vector store, and a pair feeding
/// two scalar stores costs a move of its high half.
bool isRoundTripToBF16(Operation &op) {
  auto trunc = dyn_cast<arith::TruncFOp>(op);
  return trunc && trunc.getIn().getType().isF32() && trunc.getType().isBF16() &&
         !trunc.getRoundingmodeAttr() && !trunc->use_empty() &&
         llvm::all_of(trunc->getUsers(), [](Operation *user) {
           auto ext = dyn_cast<arith::ExtFOp>(user);
           return ext && ext.getType().isF32();
         });
}

/// Whether every use of `first`'s result comes after `second` (same block).
bool usedOnlyAfter(Operation *first, Operation *second) {
  Block *block = first->getBlock();
  return llvm::all_of(first->getUsers(), [&](Operation *user) {
    Operation *inBlock = block->findAncestorOpInBlock(*user);
    return inBlock && second->isBeforeInBlock(inBlock);
  });
}

/// Replaces `first` and `second` and their extensions by one
/// `cvt.rn.bf16x2.f32` of their inputs (`llvm.nvvm.ff2bf16x2.rn`: its first
/// operand goes to the high half), built where `second` is, and the f32
/// values of its halves: a bf16 is the high half of the f32 it extends to,
/// so the high half is the pair masked, the low one the pair shifted up
/// (one instruction each; ptxas extends an extracted high half with a
/// PRMT and a shift).
void pair(arith::TruncFOp first, arith::TruncFOp second) {
  OpBuilder b(second);
  Location loc = second.getLoc();
  Value rounded = LLVM::CallIntrinsicOp::create(b, loc, VectorType::get({2}, b.getBF16Type()),
                                                b.getStringAttr("llvm.nvvm.ff2bf16x2.rn"),
                                                ValueRange{second.getIn(), first.getIn()})
                      .getResult(0);
  Value bits = LLVM::BitcastOp::create(b, loc, b.getI32Type(), rounded);
  auto i32 = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v); };
  Value low = arith::BitcastOp::create(b, loc, b.getF32Type(),
                                       arith::ShLIOp::create(b, loc, bits, i32(16)));
  Value high = arith::BitcastOp::create(
      b, loc, b.getF32Type(), arith::AndIOp::create(b, loc, bits, i32(int32_t(0xffff0000))));
  for (auto [trunc, value] : {std::pair(first, low), std::pair(second, high)}) {
    for (Operation *ext : llvm::make_early_inc_range(trunc->getUsers())) {
      ext->getResult(0).replaceAllUsesWith(value);
      ext->erase();
    }
    trunc.erase();
  }
}

/// The compute capability of `module`'s NVVM target (sm_90: 90), 0 if none.
unsigned targetChip(gpu::GPUModuleOp module) {
  ArrayAttr targets = module.getTargetsAttr();
  if (!targets)
    return 0;
  for (Attribute target : targets)
    if (auto nvvm = dyn_cast<NVVM::NVVMTargetAttr>(target)) {
      unsigned chip = 0;
      StringRef digits = nvvm.getChip();
      if (digits.consume_front("sm_") && !digits.take_while(llvm::isDigit).getAsInteger(10, chip))
        return chip;
    }
  return 0;
}

struct PairTruncationsPass : nerve::impl::PairTruncationsBase<PairTruncationsPass> {
  void runOnOperation() override {
    // The pair form came with sm_80.
    if (targetChip(getOperation()) < 80)
      return;
    SmallVector<std::pair<arith::TruncFOp, arith::TruncFOp>> pairs;
    getOperation()->walk([&](Block *block) {
      arith::TruncFOp pending;
      for (Operation &op : *block) {
        if (!isRoundTripToBF16(op))
          continue;
        auto trunc = cast<arith::TruncFOp>(op);
        if (pending && usedOnlyAfter(pending, trunc)) {
          pairs.push_back({pending, trunc});
          pending = nullptr;
        } else {
          pending = trunc;
        }
      }
    });
    for (auto [first, second] : pairs)
      pair(first, second);
  }
};

} // namespace
