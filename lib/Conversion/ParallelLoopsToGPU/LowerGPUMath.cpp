//===- LowerGPUMath.cpp - math functions in GPU code --------------------===//
//
// What PTX can do in one instruction becomes an LLVM intrinsic. The rest
// needs libdevice's __nv_* functions, which are linked when a CUDA toolkit
// provides libdevice.10.bc; without one, f32 functions are expanded into
// MLIR's polynomial approximations, and anything still needing the library
// is reported instead of leaving an unresolved call in the PTX.
//
//===----------------------------------------------------------------------===//

#include "nerve/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nerve {
#define GEN_PASS_DEF_LOWERGPUMATH
#include "nerve/Conversion/Passes.h.inc"
} // namespace nerve

using namespace mlir;

namespace {

/// The special-function 2^x an approximate exp becomes.
constexpr llvm::StringLiteral kApproximateExp2 = "llvm.nvvm.ex2.approx.ftz.f32";
/// Intrinsics math ops become (ToIntrinsic adds the type's suffix).
constexpr llvm::StringLiteral kFabs = "llvm.fabs";
constexpr llvm::StringLiteral kSqrt = "llvm.sqrt";

/// A math op that maps onto one LLVM intrinsic the NVPTX backend selects
/// to a single instruction. It is called by name (llvm.call_intrinsic):
/// convert-gpu-to-nvvm would turn the dedicated intrinsic ops into libdevice
/// calls.
template <typename MathOp>
struct ToIntrinsic : OpRewritePattern<MathOp> {
  ToIntrinsic(MLIRContext *ctx, StringRef intrinsic)
      : OpRewritePattern<MathOp>(ctx), intrinsic(intrinsic.str()) {}
  LogicalResult matchAndRewrite(MathOp op, PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!type.isF32() && !type.isF64())
      return failure();
    std::string name = intrinsic + (type.isF32() ? ".f32" : ".f64");
    rewriter.replaceOpWithNewOp<LLVM::CallIntrinsicOp>(op, type, rewriter.getStringAttr(name),
                                                       op->getOperands());
    return success();
  }
  std::string intrinsic;
};

/// An approximate f32 exp (`afn`, set by nerve-half-storage-math or fast
/// math) is 2^(x log2 e) on the special-function unit, flushing results
/// below 2^-126 to zero: `ex2.approx.ftz.f32` is one instruction where
/// `ex2.approx.f32` (libdevice's __nv_fast_expf) adds three to keep
/// subnormal results, which no 16-bit result can use (f16's smallest is
/// 2^-24; bf16's subnormals lie under 2^-126 too).
struct ApproximateExp : OpRewritePattern<math::ExpOp> {
  ApproximateExp(MLIRContext *ctx) : OpRewritePattern<math::ExpOp>(ctx, /*benefit=*/2) {}
  LogicalResult matchAndRewrite(math::ExpOp op, PatternRewriter &rewriter) const override {
    if (!op.getType().isF32() ||
        !arith::bitEnumContainsAll(op.getFastmath(), arith::FastMathFlags::afn))
      return failure();
    Location loc = op.getLoc();
    Value log2e = arith::ConstantOp::create(rewriter, loc, op.getType(),
                                            rewriter.getF32FloatAttr(1.4426950408889634f));
    Value power = arith::MulFOp::create(rewriter, loc, op.getOperand(), log2e);
    rewriter.replaceOpWithNewOp<LLVM::CallIntrinsicOp>(
        op, op.getType(), rewriter.getStringAttr(kApproximateExp2),
        ValueRange{power});
    return success();
  }
};

/// Whether `value` is at least 0 (or NaN), by how it is computed: a
/// constant, exp, |x|, sqrt, x * x, or a sum of such.
bool isNonNegative(Value value, int depth = 0);

/// Whether `value` is at least 1 (or NaN): a constant, or a sum of one
/// such and a non-negative value (sigmoid's 1 + exp(-x)).
bool isAtLeastOne(Value value, int depth = 0) {
  FloatAttr constant;
  if (matchPattern(value, m_Constant(&constant)))
    return constant.getValueAsDouble() >= 1.0;
  auto add = value.getDefiningOp<arith::AddFOp>();
  if (!add || depth > 3)
    return false;
  return (isAtLeastOne(add.getLhs(), depth + 1) && isNonNegative(add.getRhs(), depth + 1)) ||
         (isAtLeastOne(add.getRhs(), depth + 1) && isNonNegative(add.getLhs(), depth + 1));
}

bool isNonNegative(Value value, int depth) {
  FloatAttr constant;
  if (matchPattern(value, m_Constant(&constant)))
    return constant.getValueAsDouble() >= 0.0;
  Operation *def = value.getDefiningOp();
  if (!def || depth > 3)
    return false;
  if (isa<math::ExpOp, math::AbsFOp, math::SqrtOp>(def))
    return true;
  // The same, already rewritten by the other patterns here.
  if (auto call = dyn_cast<LLVM::CallIntrinsicOp>(def)) {
    StringRef name = call.getIntrin();
    return name == kApproximateExp2 || name.starts_with(kFabs) || name.starts_with(kSqrt);
  }
  if (auto mul = dyn_cast<arith::MulFOp>(def))
    return mul.getLhs() == mul.getRhs();
  if (auto add = dyn_cast<arith::AddFOp>(def))
    return isNonNegative(add.getLhs(), depth + 1) && isNonNegative(add.getRhs(), depth + 1);
  return false;
}

/// An approximate f32 division (`afn`) by a value known to be at least 1
/// (sigmoid's 1 / (1 + exp(-x))) flushes subnormals: `div.approx.ftz` /
/// `rcp.approx.ftz` are the special-function reciprocal and a multiply,
/// where the non-ftz forms add a compare, two selects and a multiply to
/// scale subnormal operands. With such a divisor a subnormal numerator or
/// result can only come with a subnormal exact result (|a / b| <= |a|), so
/// what is lost is what the approximate exp loses: results below 2^-126.
/// Other divisors keep the non-ftz form: a subnormal divisor flushed would
/// be a wrong result (infinity, or NaN over a subnormal numerator).
struct ApproximateDivision : OpRewritePattern<arith::DivFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::DivFOp op, PatternRewriter &rewriter) const override {
    // A constant divisor is LLVM's: x * (1 / c), one multiply.
    if (!op.getType().isF32() ||
        !arith::bitEnumContainsAll(op.getFastmath(), arith::FastMathFlags::afn) ||
        matchPattern(op.getRhs(), m_Constant()) || !isAtLeastOne(op.getRhs()))
      return failure();
    FloatAttr numerator;
    if (matchPattern(op.getLhs(), m_Constant(&numerator)) &&
        numerator.getValueAsDouble() == 1.0) {
      rewriter.replaceOpWithNewOp<LLVM::CallIntrinsicOp>(
          op, op.getType(), rewriter.getStringAttr("llvm.nvvm.rcp.approx.ftz.f"),
          ValueRange{op.getRhs()});
      return success();
    }
    rewriter.replaceOpWithNewOp<LLVM::CallIntrinsicOp>(
        op, op.getType(), rewriter.getStringAttr("llvm.nvvm.div.approx.ftz.f"),
        ValueRange{op.getLhs(), op.getRhs()});
    return success();
  }
};

/// rsqrt(x) = 1 / sqrt(x), both IEEE-rounded.
struct ExpandRsqrt : OpRewritePattern<math::RsqrtOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::RsqrtOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value one = arith::ConstantOp::create(rewriter, loc, op.getType(),
                                          rewriter.getFloatAttr(op.getType(), 1.0));
    Value root = math::SqrtOp::create(rewriter, loc, op.getOperand());
    rewriter.replaceOpWithNewOp<arith::DivFOp>(op, one, root);
    return success();
  }
};

struct LowerGPUMathPass : nerve::impl::LowerGPUMathBase<LowerGPUMathPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    if (!libdevice) {
      // Reduce to what the polynomial approximations cover (exp, log,
      // tanh, erf, ...) and what becomes an instruction.
      patterns.add<ExpandRsqrt>(ctx);
      math::populateExpansionPatterns(patterns, {"powf", "exp2", "tan", "sinh", "cosh",
                                                 "asinh", "acosh", "atanh", "fpowi", "ctlz",
                                                 "roundeven", "round"});
      populateMathPolynomialApproximationPatterns(
          patterns, [](StringRef name) { return true; });
    }
    patterns.add<ApproximateExp, ApproximateDivision>(ctx);
    patterns.add<ToIntrinsic<math::SqrtOp>>(ctx, kSqrt);
    patterns.add<ToIntrinsic<math::AbsFOp>>(ctx, kFabs);
    patterns.add<ToIntrinsic<math::FmaOp>>(ctx, "llvm.fma");
    patterns.add<ToIntrinsic<math::FloorOp>>(ctx, "llvm.floor");
    patterns.add<ToIntrinsic<math::CeilOp>>(ctx, "llvm.ceil");
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    if (libdevice)
      return;
    WalkResult result = getOperation()->walk([&](Operation *op) {
      if (op->getDialect() && op->getDialect()->getNamespace() == "math") {
        op->emitOpError() << "on " << op->getResultTypes()
                          << " needs libdevice, and no CUDA toolkit provides one; set "
                             "CUDA_HOME or pass the path of libdevice.10.bc";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
