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
#include "llvm/ADT/SmallPtrSet.h"

namespace nerve {
#define GEN_PASS_DEF_LOWERGPUMATH
#include "nerve/Conversion/Passes.h.inc"
} // namespace nerve

using namespace mlir;

namespace {

/// The special-function 2^x an approximate exp becomes.
constexpr llvm::StringLiteral kApproximateExp2 = "llvm.nvvm.ex2.approx.ftz.f32";
/// The special-function log2 and reciprocal, flushing subnormals.
constexpr llvm::StringLiteral kApproximateLog2 = "llvm.nvvm.lg2.approx.ftz.f";
constexpr llvm::StringLiteral kApproximateReciprocal = "llvm.nvvm.rcp.approx.ftz.f";
constexpr llvm::StringLiteral kApproximateDivision = "llvm.nvvm.div.approx.ftz.f";
/// Intrinsics math ops become (ToIntrinsic adds the type's suffix).
constexpr llvm::StringLiteral kFabs = "llvm.fabs";
constexpr llvm::StringLiteral kSqrt = "llvm.sqrt";
constexpr double kLog2E = 1.4426950408889634;

/// Whether `op` is an f32 function that may be approximated (`afn`).
bool approximatesF32(Operation *op) {
  auto fm = dyn_cast<arith::ArithFastMathInterface>(op);
  return fm && op->getResult(0).getType().isF32() &&
         arith::bitEnumContainsAll(fm.getFastMathFlagsAttr().getValue(),
                                   arith::FastMathFlags::afn);
}

Value f32Constant(OpBuilder &b, Location loc, double value) {
  return arith::ConstantOp::create(b, loc, b.getF32Type(), b.getF32FloatAttr(float(value)));
}

/// A call of the f32 intrinsic `name` on `operands`.
Value callF32(OpBuilder &b, Location loc, StringRef name, ValueRange operands) {
  return LLVM::CallIntrinsicOp::create(b, loc, b.getF32Type(), b.getStringAttr(name), operands)
      .getResult(0);
}

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

/// Functions whose operand is known to be at least 0 (or NaN), found
/// before any rewriting: an expansion replaces the ops the analysis
/// recognises (a log1p becomes a select) by ops it cannot see through.
using NonNegativeOperands = llvm::SmallPtrSet<Operation *, 16>;

/// Which f32 functions of one operand a FunctionForm rewrites: the
/// approximate ones (`afn`, set by nerve-half-storage-math or fast math),
/// or the exact ones whose operand is non-negative.
enum class Accepts { Approximate, ExactOfNonNegative };

/// An f32 function of one operand that `accepts`, rewritten into what
/// `expand` builds from the operand, told whether the operand is
/// non-negative; ahead of MLIR's polynomial approximations of the same ops
/// (benefit 2), which run without libdevice.
template <typename MathOp> struct FunctionForm : OpRewritePattern<MathOp> {
  using Expand = Value (*)(OpBuilder &, Location, Value, bool nonNegative);
  FunctionForm(MLIRContext *ctx, Accepts accepts, Expand expand,
               const NonNegativeOperands &nonNegative)
      : OpRewritePattern<MathOp>(ctx, /*benefit=*/2), accepts(accepts), expand(expand),
        nonNegative(nonNegative) {}
  LogicalResult matchAndRewrite(MathOp op, PatternRewriter &rewriter) const override {
    bool approximate = approximatesF32(op);
    bool positiveOperand = nonNegative.contains(op.getOperation());
    if (accepts == Accepts::Approximate ? !approximate
                                        : approximate || !op.getType().isF32() || !positiveOperand)
      return failure();
    rewriter.replaceOp(op, expand(rewriter, op.getLoc(), op.getOperand(), positiveOperand));
    return success();
  }
  Accepts accepts;
  Expand expand;
  const NonNegativeOperands &nonNegative;
};

/// An approximate exp: 2^(x log2 e) on the special-function unit, flushing
/// results below 2^-126 to zero: `ex2.approx.ftz.f32` is one instruction
/// where `ex2.approx.f32` (libdevice's __nv_fast_expf) adds three to keep
/// subnormal results, which no 16-bit result can use (f16's smallest is
/// 2^-24; bf16's subnormals lie under 2^-126 too).
Value approximateExp(OpBuilder &b, Location loc, Value x, bool) {
  Value power = arith::MulFOp::create(b, loc, x, f32Constant(b, loc, kLog2E));
  return callF32(b, loc, kApproximateExp2, power);
}

/// How deep isNonNegative and isAtLeastOne look through producers: enough
/// for a softplus rounded to 16 bits and scaled, `(max(x, 0) + log1p(exp(
/// -|x|))) * 0.5` (six levels).
constexpr int kMaxRangeDepth = 8;

/// Whether `value` is at least 0 or NaN (-0 included), by how it is
/// computed: a constant, exp, |x|, sqrt, log1p or tanh of such, x * x, a
/// maximum with such, sums, products, minima and selects of such, and such
/// a value extended or truncated.
bool isNonNegative(Value value, int depth = 0);

/// Whether `value` is at least 1 (or NaN): a constant, or a sum of one
/// such and a non-negative value (sigmoid's 1 + exp(-x)).
bool isAtLeastOne(Value value, int depth = 0) {
  FloatAttr constant;
  if (matchPattern(value, m_Constant(&constant)))
    return constant.getValueAsDouble() >= 1.0;
  auto add = value.getDefiningOp<arith::AddFOp>();
  if (!add || depth > kMaxRangeDepth)
    return false;
  return (isAtLeastOne(add.getLhs(), depth + 1) && isNonNegative(add.getRhs(), depth + 1)) ||
         (isAtLeastOne(add.getRhs(), depth + 1) && isNonNegative(add.getLhs(), depth + 1));
}

bool isNonNegative(Value value, int depth) {
  FloatAttr constant;
  if (matchPattern(value, m_Constant(&constant)))
    return constant.getValueAsDouble() >= 0.0;
  Operation *def = value.getDefiningOp();
  if (!def || depth > kMaxRangeDepth)
    return false;
  auto operand = [&](unsigned i) { return isNonNegative(def->getOperand(i), depth + 1); };
  if (isa<math::ExpOp, math::Exp2Op, math::AbsFOp, math::SqrtOp>(def))
    return true;
  // The same, already rewritten by the other patterns here.
  if (auto call = dyn_cast<LLVM::CallIntrinsicOp>(def)) {
    StringRef name = call.getIntrin();
    return name == kApproximateExp2 || name.starts_with(kFabs) || name.starts_with(kSqrt);
  }
  if (auto mul = dyn_cast<arith::MulFOp>(def))
    if (mul.getLhs() == mul.getRhs())
      return true;
  // NaN stays NaN through each of these. maximumf propagates NaN, so one
  // operand suffices; maxnumf and minnumf return the other operand for a
  // NaN one, so both must be. No quotients: x / -0 is -inf.
  if (isa<arith::MaximumFOp>(def))
    return operand(0) || operand(1);
  if (isa<arith::AddFOp, arith::MulFOp, arith::MinimumFOp, arith::MaxNumFOp, arith::MinNumFOp>(def))
    return operand(0) && operand(1);
  if (isa<arith::ExtFOp, arith::TruncFOp, math::Log1pOp, math::TanhOp>(def))
    return operand(0);
  if (isa<arith::SelectOp>(def))
    return operand(1) && operand(2);
  return false;
}

/// Whether `value` is an exp of a value at most 0 or NaN (-x of a
/// non-negative x, a constant): in [+0, 1] or NaN, never infinity or -0.
bool isExpOfNonPositive(Value value) {
  auto exp = value.getDefiningOp<math::ExpOp>();
  if (!exp)
    return false;
  Value power = exp.getOperand();
  FloatAttr constant;
  if (matchPattern(power, m_Constant(&constant)))
    return constant.getValueAsDouble() <= 0.0;
  auto neg = power.getDefiningOp<arith::NegFOp>();
  return neg && isNonNegative(neg.getOperand());
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
    if (!approximatesF32(op) || matchPattern(op.getRhs(), m_Constant()) ||
        !isAtLeastOne(op.getRhs()))
      return failure();
    FloatAttr numerator;
    if (matchPattern(op.getLhs(), m_Constant(&numerator)) &&
        numerator.getValueAsDouble() == 1.0) {
      rewriter.replaceOp(op, callF32(rewriter, op.getLoc(), kApproximateReciprocal, op.getRhs()));
      return success();
    }
    rewriter.replaceOp(op, callF32(rewriter, op.getLoc(), kApproximateDivision,
                                   {op.getLhs(), op.getRhs()}));
    return success();
  }
};

/// An approximate log1p with a relative error far below 16-bit
/// rounding everywhere (libdevice's log1pf is a long polynomial, and the
/// special-function log2 of 1 + x alone errs by 2^-22 absolute, so
/// relatively without bound near x = 0): where |x| < 1/32 the series
/// x (1 - x/2 + x^2/3 - x^3/4) (truncation under 2^-22 relative), elsewhere
/// `lg2.approx.ftz`(1 + x) * ln 2, whose result is then at least 0.03 in
/// magnitude (relative error about 2^-17). 1 + x is never subnormal, so the
/// flush loses nothing; -1 gives -inf, below -1 and NaN give NaN.
Value approximateLog1p(OpBuilder &b, Location loc, Value x, bool nonNegative) {
  auto c = [&](double v) { return f32Constant(b, loc, v); };
  Value quarter = c(-0.25), third = c(1.0 / 3.0);
  Value series = math::FmaOp::create(b, loc, x, quarter, third);
  series = math::FmaOp::create(b, loc, series, x, c(-0.5));
  series = math::FmaOp::create(b, loc, series, x, c(1.0));
  series = arith::MulFOp::create(b, loc, series, x);
  Value onePlus = arith::AddFOp::create(b, loc, x, c(1.0));
  Value log2 = callF32(b, loc, kApproximateLog2, onePlus);
  Value log = arith::MulFOp::create(b, loc, log2, c(0.69314718055994531));
  // A non-negative x (-0 included) is its own magnitude.
  Value magnitude = nonNegative ? x : math::AbsFOp::create(b, loc, x);
  Value small = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, magnitude, c(1.0 / 32));
  return arith::SelectOp::create(b, loc, small, series, log);
}

/// An approximate tanh, again far below 16-bit rounding (PTX's
/// `tanh.approx` errs by 2^-11, as much as the rounding itself): where
/// |x| < 1/4 the odd series x + x^3 (-1/3 + x^2 (2/15 - 17/315 x^2))
/// (truncation under 2^-21 relative); elsewhere 1 - 2 / (2^(2|x| log2 e) + 1)
/// with the sign of x, on the special-function 2^x and reciprocal (flushing
/// nothing: the reciprocal's input is at least 2), whose result is then at
/// least 0.24 (relative error about 2^-20). Large |x| and infinities give
/// +-1 (the reciprocal of infinity is 0), NaN gives NaN.
Value approximateTanh(OpBuilder &b, Location loc, Value x, bool nonNegative) {
  auto c = [&](double v) { return f32Constant(b, loc, v); };
  Value square = arith::MulFOp::create(b, loc, x, x);
  Value c7 = c(-17.0 / 315), c5 = c(2.0 / 15);
  Value series = math::FmaOp::create(b, loc, square, c7, c5);
  series = math::FmaOp::create(b, loc, series, square, c(-1.0 / 3));
  series = arith::MulFOp::create(b, loc, series, square);
  series = math::FmaOp::create(b, loc, series, x, x);
  // A non-negative x (-0 included, which takes the series) is its own
  // magnitude, and the other form's sign is already its own.
  Value magnitude = nonNegative ? x : math::AbsFOp::create(b, loc, x);
  Value power = arith::MulFOp::create(b, loc, magnitude, c(2 * kLog2E));
  Value exp = callF32(b, loc, kApproximateExp2, power);
  Value denominator = arith::AddFOp::create(b, loc, exp, c(1.0));
  Value reciprocal = callF32(b, loc, kApproximateReciprocal, denominator);
  Value minusTwo = c(-2.0), one = c(1.0);
  Value large = math::FmaOp::create(b, loc, reciprocal, minusTwo, one);
  Value signedLarge = nonNegative ? large : math::CopySignOp::create(b, loc, large, x);
  Value small = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, magnitude, c(0.25));
  return arith::SelectOp::create(b, loc, small, series, signedLarge);
}

/// log1p of an f32 known to be at least 0 or NaN, as exact as libdevice's
/// log1pf (within 0.91 ulp of float64 over every range sampled, against its
/// 1) without the special cases of a negative argument: 1 + x = 2^k (1 + t)
/// with 1 + t in [0.75, 1.5), so log1p(x) = k ln 2 + log1p(t), where
/// t = x 2^-k + (2^-k - 1) (the scaling by 2^-k exact, 2^-k - 1 exact, one
/// rounding) and log1p(t) = t + t^2 p(t), p a degree-8 polynomial fitted
/// to (log1p(t) - t) / t^2 on [-0.25, 0.5] for the relative error. k comes
/// from 1 + x rounded toward zero, so that 1 + t stays in range. Zeros,
/// infinity and NaN (whose bits would scale wrongly) are their own log1p:
/// one unsigned compare selects them; where x is an exp of a non-positive
/// value (softplus's log1p(exp(-|x|))), only NaN can be, and an unordered
/// compare does. Four or five instructions fewer than libdevice's form an
/// element (the f32 chain of issue 8).
Value exactLog1pOfNonNegative(OpBuilder &b, Location loc, Value x, bool) {
  auto c = [&](double v) { return f32Constant(b, loc, v); };
  auto i32 = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v); };
  auto bits = [&](Value v) { return arith::BitcastOp::create(b, loc, b.getI32Type(), v); };
  auto real = [&](Value v) { return arith::BitcastOp::create(b, loc, b.getF32Type(), v); };
  Value onePlus = callF32(b, loc, "llvm.nvvm.add.rz.f", {x, c(1.0)});
  // The exponent field of 2^k: (1 + x) / 2^k lands in [0.75, 1.5).
  Value scale = arith::AndIOp::create(
      b, loc, arith::SubIOp::create(b, loc, bits(onePlus), i32(0x3f400000)), i32(-0x800000));
  Value xBits = bits(x);
  Value scaledX = real(arith::SubIOp::create(b, loc, xBits, scale));
  Value fourOverScale = real(arith::SubIOp::create(b, loc, i32(0x40800000), scale));
  Value quarter = c(0.25), minusOne = c(-1.0);
  Value t = arith::AddFOp::create(
      b, loc, math::FmaOp::create(b, loc, quarter, fourOverScale, minusOne), scaledX);
  Value exponent = arith::SIToFPOp::create(b, loc, b.getF32Type(), scale);
  Value k = arith::MulFOp::create(b, loc, exponent, c(0x1p-23));
  const double coefficients[] = {-0x1p-1,       0x1.5555a6p-2,  -0x1.000024p-2,
                                 0x1.99685ap-3, -0x1.54f23ep-3, 0x1.2897b6p-3,
                                 -0x1.0d9p-3,   0x1.abf6aap-4,  -0x1.6fe638p-5};
  Value poly = c(coefficients[8]);
  for (int j = 7; j >= 0; --j)
    poly = math::FmaOp::create(b, loc, poly, t, c(coefficients[j]));
  Value log1pT = math::FmaOp::create(b, loc, arith::MulFOp::create(b, loc, t, poly), t, t);
  Value core = math::FmaOp::create(b, loc, k, c(0.69314718055994531), log1pT);
  if (isExpOfNonPositive(x)) {
    Value number = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ORD, x, x);
    return arith::SelectOp::create(b, loc, number, core, x);
  }
  // Positive and finite: bits - 1 below the largest finite value's bits.
  Value regular =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                            arith::SubIOp::create(b, loc, xBits, i32(1)), i32(0x7f7fffff));
  return arith::SelectOp::create(b, loc, regular, core, x);
}

/// tanh of an f32 known to be at least 0 (-0 included) or NaN, in the
/// form libdevice's tanhf takes (documented within 2 ulp) less what a sign
/// costs: where x < 0.6, x + x^3 p(x^2), p a degree-4 polynomial fitted to
/// (tanh(x) - x) / x^3 on [0, 0.6] for the relative error (under 2^-28);
/// elsewhere 1 - 2 / (2^(2x log2 e) + 1) on the special-function 2^x and
/// reciprocal, whose errors the form damps (the result is at least 0.53;
/// large x gives 1 through the reciprocal of infinity, NaN gives NaN). No
/// |x|, no sign to copy and no clamp of large x: three instructions fewer
/// an element than libdevice's (the f32 chain of issue 8: the tanh of a
/// softplus).
Value exactTanhOfNonNegative(OpBuilder &b, Location loc, Value x, bool) {
  auto c = [&](double v) { return f32Constant(b, loc, v); };
  const double coefficients[] = {-0x1.55553ep-2, 0x1.1109aep-3, -0x1.b898dep-5, 0x1.54b8a0p-6,
                                 -0x1.82585ap-8};
  Value square = arith::MulFOp::create(b, loc, x, x);
  Value poly = c(coefficients[4]);
  for (int j = 3; j >= 0; --j)
    poly = math::FmaOp::create(b, loc, poly, square, c(coefficients[j]));
  Value series = math::FmaOp::create(b, loc, arith::MulFOp::create(b, loc, poly, square), x, x);
  Value power = arith::MulFOp::create(b, loc, x, c(2 * kLog2E));
  Value exp = callF32(b, loc, kApproximateExp2, power);
  Value denominator = arith::AddFOp::create(b, loc, exp, c(1.0));
  Value reciprocal = callF32(b, loc, kApproximateReciprocal, denominator);
  Value minusTwo = c(-2.0), one = c(1.0);
  Value large = math::FmaOp::create(b, loc, reciprocal, minusTwo, one);
  Value small = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, c(0.6));
  return arith::SelectOp::create(b, loc, small, series, large);
}

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
    // One walk over the unrewritten ops: the functions of non-negative
    // operands, and the maximum of a non-negative value and a negative
    // constant, which is the value (maximumf keeps NaN, and -0 above the
    // constant): a clamp's lower bound below the value's range, such as
    // tanh(softplus(x)) clamped at -0.9. Not maxnumf, which would give the
    // constant for NaN.
    NonNegativeOperands nonNegative;
    getOperation()->walk([&](Operation *op) {
      if (isa<math::Log1pOp, math::TanhOp>(op) && isNonNegative(op->getOperand(0)))
        nonNegative.insert(op);
      if (!isa<arith::MaximumFOp>(op))
        return;
      for (unsigned i = 0; i < 2; ++i) {
        FloatAttr bound;
        if (matchPattern(op->getOperand(1 - i), m_Constant(&bound)) &&
            bound.getValueAsDouble() < 0.0 && isNonNegative(op->getOperand(i))) {
          op->getResult(0).replaceAllUsesWith(op->getOperand(i));
          op->erase();
          return;
        }
      }
    });
    const Accepts approximate = Accepts::Approximate, exact = Accepts::ExactOfNonNegative;
    patterns.add<FunctionForm<math::ExpOp>>(ctx, approximate, approximateExp, nonNegative);
    patterns.add<FunctionForm<math::Log1pOp>>(ctx, approximate, approximateLog1p, nonNegative);
    patterns.add<FunctionForm<math::TanhOp>>(ctx, approximate, approximateTanh, nonNegative);
    patterns.add<FunctionForm<math::Log1pOp>>(ctx, exact, exactLog1pOfNonNegative, nonNegative);
    patterns.add<FunctionForm<math::TanhOp>>(ctx, exact, exactTanhOfNonNegative, nonNegative);
    patterns.add<ApproximateDivision>(ctx);
    patterns.add<ToIntrinsic<math::SqrtOp>>(ctx, kSqrt);
    patterns.add<ToIntrinsic<math::AbsFOp>>(ctx, kFabs);
    patterns.add<ToIntrinsic<math::FmaOp>>(ctx, "llvm.fma");
    patterns.add<ToIntrinsic<math::CopySignOp>>(ctx, "llvm.copysign");
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
