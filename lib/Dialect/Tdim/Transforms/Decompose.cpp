//===- Decompose.cpp - composite tdim ops as maps and reductions --------===//
//
// softmax:     m = max(x); s = sum(exp(x - m)); y = exp(x - m) * (1 / s)
// log_softmax: m = max(x); s = sum(exp(x - m)); y = x - m - log(s)
//   With store-exponentials (f32/f64, contiguous rows): y = exp(x - m);
//   s = sum(y); y = y * (1 / s), one exponential per element where the row
//   is still in cache for the second pass (the CPU).
//   1 / s and log(s) are taken once per row (the sum's post region), not per
//   element: a division or a logarithm per element costs a 16-bit kernel
//   as much as its memory traffic.
//   Over a dimension that is not x's contiguous one (a column), m and s
//   come from one online reduction (a running maximum and a sum rescaled
//   whenever it grows), which reads x once instead of twice: columns do not
//   stay on chip between passes the way rows do (row programs).
// layer_norm:  mean = sum(x) / n; rstd = rsqrt(sum((x - mean)^2) / n + eps);
//              y = (x - mean) * rstd * w + b
// broadcast, relayout: an identity map; concat: identity maps into slices.
//
// Statistics are kept in the compute type (f32 for f16/bf16 storage).
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/Tdim/Transforms/Passes.h"

#include "nerve/Dialect/Tdim/IR/TdimBuilders.h"
#include "nerve/Dialect/Tdim/IR/TdimOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nerve::tdim {
#define GEN_PASS_DEF_TDIMDECOMPOSE
#include "nerve/Dialect/Tdim/Transforms/Passes.h.inc"
} // namespace nerve::tdim

using namespace mlir;
using namespace nerve::tdim;

static Value floatConst(OpBuilder &b, Location loc, Type type, double v) {
  return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, v));
}

static TdimTensorType tensorOf(Value v) { return llvm::cast<TdimTensorType>(v.getType()); }

static Value reciprocal(OpBuilder &b, Location l, Value v) {
  return arith::DivFOp::create(b, l, floatConst(b, l, v.getType(), 1.0), v);
}

/// Region bodies: exp(a0 - a1), a0 + a1, a0.
static SmallVector<Value> expOfDifference(OpBuilder &b, Location l, ValueRange a) {
  return {math::ExpOp::create(b, l, arith::SubFOp::create(b, l, a[0], a[1]))};
}
static SmallVector<Value> sumOfPair(OpBuilder &b, Location l, ValueRange a) {
  return {arith::AddFOp::create(b, l, a[0], a[1])};
}
static SmallVector<Value> firstValue(OpBuilder &, Location, ValueRange a) { return {a[0]}; }

/// Row statistic of `x` over `dim`: reduce with `combine` from `init`,
/// applying `mapFn` to (x, extra inputs...) first and `postFn`, if given, to
/// (the result, the count) last.
static Value reduceRows(OpBuilder &b, Location loc, Value x, ValueRange extra,
                        DimAttr dim, Attribute init, const RegionBodyFn &mapFn,
                        const RegionBodyFn &combineFn, const RegionBodyFn &postFn = nullptr) {
  Type compute = llvm::cast<TypedAttr>(init).getType();
  Value out = buildAllocLike(b, loc, x, dimsWithout(tensorOf(x), {dim}), compute);
  SmallVector<Value> inputs{x};
  llvm::append_range(inputs, extra);
  auto reduce = ReduceOp::create(b, loc, inputs, ValueRange{out},
                                 b.getArrayAttr({dim}), b.getArrayAttr({init}));
  buildRegion(b, loc, reduce.getMap(), computeTypesOf(inputs), mapFn);
  buildRegion(b, loc, reduce.getCombine(), {compute, compute}, combineFn);
  if (postFn)
    buildRegion(b, loc, reduce.getPost(), {compute, b.getIndexType()}, postFn);
  return out;
}

/// The maximum of `x` over `dim`, from `negInf`.
static Value rowMaximum(OpBuilder &b, Location loc, Value x, DimAttr dim, Attribute negInf) {
  return reduceRows(b, loc, x, {}, dim, negInf, firstValue,
                    [](OpBuilder &b, Location l, ValueRange a) {
                      return SmallVector<Value>{arith::MaximumFOp::create(b, l, a[0], a[1])};
                    });
}

/// Whether `dim` is `t`'s unit-stride dimension.
static bool isContiguousDim(TdimTensorType t, DimAttr dim) {
  return t.getEffectiveStrides()[*t.getPosition(dim)] == 1;
}

/// The maximum of `x` over `dim` and `ofSum` of the sum of exp(x - maximum),
/// in one reduction of two accumulators (m, s): an element folds in as
/// (x, 1), and two partials merge into the larger maximum, the sum of the
/// smaller side scaled by exp(smaller - larger) added to the other. Equal
/// maxima (both -inf included, where the difference would be NaN) scale by 1.
static std::pair<Value, Value>
onlineMaxAndSum(OpBuilder &b, Location loc, Value x, DimAttr dim, Type compute, Attribute negInf,
                function_ref<Value(OpBuilder &, Location, Value)> ofSum) {
  SmallVector<DimAttr> kept = dimsWithout(tensorOf(x), {dim});
  Value max = buildAllocLike(b, loc, x, kept, compute);
  Value normalizer = buildAllocLike(b, loc, x, kept, compute);
  // Stated for f32 statistics, whose folds may take a block of values at
  // once.
  auto reduce = ReduceOp::create(b, loc, ValueRange{x}, ValueRange{max, normalizer},
                                 b.getArrayAttr({dim}),
                                 b.getArrayAttr({negInf, b.getFloatAttr(compute, 0.0)}),
                                 compute.isF32() ? b.getUnitAttr() : UnitAttr());
  buildRegion(b, loc, reduce.getMap(), computeTypesOf({x}),
              [&](OpBuilder &rb, Location l, ValueRange a) {
                return SmallVector<Value>{a[0], floatConst(rb, l, compute, 1.0)};
              });
  buildRegion(b, loc, reduce.getCombine(), {compute, compute, compute, compute},
              [&](OpBuilder &rb, Location l, ValueRange a) {
                Value m1 = a[0], s1 = a[1], m2 = a[2], s2 = a[3];
                Value m = arith::MaximumFOp::create(rb, l, m1, m2);
                Value lo = arith::MinimumFOp::create(rb, l, m1, m2);
                Value same = arith::CmpFOp::create(rb, l, arith::CmpFPredicate::OEQ, m1, m2);
                Value scale = arith::SelectOp::create(
                    rb, l, same, floatConst(rb, l, compute, 1.0),
                    math::ExpOp::create(rb, l, arith::SubFOp::create(rb, l, lo, m)));
                Value firstLarger =
                    arith::CmpFOp::create(rb, l, arith::CmpFPredicate::OGE, m1, m2);
                Value larger = arith::SelectOp::create(rb, l, firstLarger, s1, s2);
                Value smaller = arith::SelectOp::create(rb, l, firstLarger, s2, s1);
                Value s = arith::AddFOp::create(
                    rb, l, arith::MulFOp::create(rb, l, smaller, scale), larger);
                return SmallVector<Value>{m, s};
              });
  buildRegion(b, loc, reduce.getPost(), {compute, compute, b.getIndexType()},
              [&](OpBuilder &rb, Location l, ValueRange a) {
                return SmallVector<Value>{a[0], ofSum(rb, l, a[1])};
              });
  return {max, normalizer};
}

namespace {

template <typename OpTy>
struct DecomposeSoftmax : OpRewritePattern<OpTy> {
  DecomposeSoftmax(MLIRContext *ctx, bool storeExponentials)
      : OpRewritePattern<OpTy>(ctx), storeExponentials(storeExponentials) {}
  static constexpr bool isLog = std::is_same_v<OpTy, LogSoftmaxOp>;
  bool storeExponentials;

  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getInput();
    DimAttr dim = op.getDim();
    Type compute = getComputeType(tensorOf(x).getElementType());
    auto negInf = rewriter.getFloatAttr(
        compute, APFloat::getInf(llvm::cast<FloatType>(compute).getFloatSemantics(), true));
    // What the map takes of the sum, once per row.
    auto ofSum = [](OpBuilder &b, Location l, Value sum) -> Value {
      if (isLog)
        return math::LogOp::create(b, l, sum);
      return reciprocal(b, l, sum);
    };
    Value max, normalizer;
    bool contiguous = isContiguousDim(tensorOf(x), dim);
    if (!isLog && storeExponentials && contiguous &&
        tensorOf(x).getElementType() == compute &&
        tensorOf(op.getOutput()).getElementType() == compute) {
      storedExponentials(rewriter, loc, op, negInf);
      rewriter.eraseOp(op);
      return success();
    }
    if (!contiguous) {
      std::tie(max, normalizer) = onlineMaxAndSum(rewriter, loc, x, dim, compute, negInf, ofSum);
    } else {
      max = rowMaximum(rewriter, loc, x, dim, negInf);
      normalizer = reduceRows(
          rewriter, loc, x, {max}, dim, rewriter.getFloatAttr(compute, 0.0), expOfDifference,
          sumOfPair, [&](OpBuilder &b, Location l, ValueRange a) {
            return SmallVector<Value>{ofSum(b, l, a[0])};
          });
    }
    buildMap(rewriter, loc, ValueRange{x, max, normalizer}, ValueRange{op.getOutput()},
             computeTypesOf({x, max, normalizer}), [](OpBuilder &b, Location l, ValueRange a) {
               Value shifted = arith::SubFOp::create(b, l, a[0], a[1]);
               if (isLog)
                 return SmallVector<Value>{arith::SubFOp::create(b, l, shifted, a[2])};
               Value e = math::ExpOp::create(b, l, shifted);
               return SmallVector<Value>{arith::MulFOp::create(b, l, e, a[2])};
             });
    rewriter.eraseOp(op);
    return success();
  }

  /// y = exp(x - max(x)); s = sum(y); y = y * (1 / s).
  static void storedExponentials(PatternRewriter &rewriter, Location loc, OpTy op,
                                 FloatAttr negInf) {
    Value x = op.getInput(), y = op.getOutput();
    DimAttr dim = op.getDim();
    Type compute = negInf.getType();
    Value max = rowMaximum(rewriter, loc, x, dim, negInf);
    buildMap(rewriter, loc, ValueRange{x, max}, ValueRange{y}, {compute, compute},
             expOfDifference);
    Value inverse = reduceRows(rewriter, loc, y, {}, dim, rewriter.getFloatAttr(compute, 0.0),
                               firstValue, sumOfPair,
                               [](OpBuilder &b, Location l, ValueRange a) {
                                 return SmallVector<Value>{reciprocal(b, l, a[0])};
                               });
    buildMap(rewriter, loc, ValueRange{y, inverse}, ValueRange{y}, {compute, compute},
             [](OpBuilder &b, Location l, ValueRange a) {
               return SmallVector<Value>{arith::MulFOp::create(b, l, a[0], a[1])};
             });
  }
};

struct DecomposeLayerNorm : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LayerNormOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getInput();
    SmallVector<DimAttr> over;
    for (Attribute a : op.getOver())
      over.push_back(llvm::cast<DimAttr>(a));
    Type compute = getComputeType(tensorOf(x).getElementType());
    SmallVector<DimAttr> kept = dimsWithout(tensorOf(x), over);
    Value mean = buildAllocLike(rewriter, loc, x, kept, compute);
    Value rstd = buildAllocLike(rewriter, loc, x, kept, compute);
    Attribute zero = rewriter.getFloatAttr(compute, 0.0);
    double eps = op.getEps().convertToDouble();

    // Two passes: the mean, then the mean square deviation from it. Each is
    // a plain sum (rows split across lanes and merged by shuffles on the
    // GPU), and subtracting the exact mean first is the accurate way to a
    // variance.
    auto countAsFloat = [&](OpBuilder &b, Location l, Value count) -> Value {
      Value n = arith::IndexCastOp::create(b, l, b.getI64Type(), count);
      return arith::UIToFPOp::create(b, l, compute, n);
    };
    auto meanReduce = ReduceOp::create(rewriter, loc, ValueRange{x}, ValueRange{mean},
                                       op.getOver(), rewriter.getArrayAttr({zero}));
    buildRegion(rewriter, loc, meanReduce.getMap(), {compute}, firstValue);
    buildRegion(rewriter, loc, meanReduce.getCombine(), {compute, compute}, sumOfPair);
    buildRegion(rewriter, loc, meanReduce.getPost(), {compute, rewriter.getIndexType()},
                [&](OpBuilder &b, Location l, ValueRange a) {
                  return SmallVector<Value>{
                      arith::DivFOp::create(b, l, a[0], countAsFloat(b, l, a[1]))};
                });
    auto varReduce = ReduceOp::create(rewriter, loc, ValueRange{x, mean}, ValueRange{rstd},
                                      op.getOver(), rewriter.getArrayAttr({zero}));
    buildRegion(rewriter, loc, varReduce.getMap(), computeTypesOf({x, mean}),
                [](OpBuilder &b, Location l, ValueRange a) {
                  Value d = arith::SubFOp::create(b, l, a[0], a[1]);
                  return SmallVector<Value>{arith::MulFOp::create(b, l, d, d)};
                });
    buildRegion(rewriter, loc, varReduce.getCombine(), {compute, compute}, sumOfPair);
    buildRegion(rewriter, loc, varReduce.getPost(), {compute, rewriter.getIndexType()},
                [&](OpBuilder &b, Location l, ValueRange a) {
                  Value var = arith::DivFOp::create(b, l, a[0], countAsFloat(b, l, a[1]));
                  Value shifted = arith::AddFOp::create(b, l, var,
                                                        floatConst(b, l, compute, eps));
                  return SmallVector<Value>{math::RsqrtOp::create(b, l, shifted)};
                });

    SmallVector<Value> inputs{x, mean, rstd};
    if (op.getWeight())
      inputs.push_back(op.getWeight());
    if (op.getBias())
      inputs.push_back(op.getBias());
    bool hasWeight = !!op.getWeight(), hasBias = !!op.getBias();
    buildMap(rewriter, loc, inputs, ValueRange{op.getOutput()}, computeTypesOf(inputs),
             [&](OpBuilder &b, Location l, ValueRange a) {
               Value y = arith::MulFOp::create(
                   b, l, arith::SubFOp::create(b, l, a[0], a[1]), a[2]);
               unsigned next = 3;
               if (hasWeight)
                 y = arith::MulFOp::create(b, l, y, a[next++]);
               if (hasBias)
                 y = arith::AddFOp::create(b, l, y, a[next++]);
               return SmallVector<Value>{y};
             });
    rewriter.eraseOp(op);
    return success();
  }
};

/// broadcast and relayout: a map that copies.
template <typename OpTy>
struct CopyAsMap : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    Type element = tensorOf(op.getInput()).getElementType();
    buildMap(rewriter, op.getLoc(), ValueRange{op.getInput()}, ValueRange{op.getOutput()},
             {element}, firstValue);
    rewriter.eraseOp(op);
    return success();
  }
};

struct DecomposeConcat : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    DimAttr dim = op.getDim();
    Value offset = ConstOp::create(rewriter, loc, TdimIndexType::get(getContext(), dim),
                                   rewriter.getI64IntegerAttr(0));
    for (Value in : op.getInputs()) {
      TdimTensorType type = tensorOf(in);
      int64_t size = type.getSize(dim);
      Value length = buildSize(rewriter, loc, in, dim);
      Value view;
      if (size != ShapedType::kDynamic)
        view = SliceOp::create(rewriter, loc, op.getOutput(), dim, offset, Value(),
                               rewriter.getI64IntegerAttr(size));
      else
        view = SliceOp::create(rewriter, loc, op.getOutput(), dim, offset, length,
                               IntegerAttr());
      buildMap(rewriter, loc, ValueRange{in}, ValueRange{view}, {type.getElementType()},
               firstValue);
      offset = AddOp::create(rewriter, loc, offset.getType(), offset, length);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

struct TdimDecomposePass : nerve::tdim::impl::TdimDecomposeBase<TdimDecomposePass> {
  using TdimDecomposeBase::TdimDecomposeBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecompositionPatterns(patterns, storeExponentials);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void nerve::tdim::populateDecompositionPatterns(RewritePatternSet &patterns,
                                                bool storeExponentials) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<DecomposeSoftmax<SoftmaxOp>, DecomposeSoftmax<LogSoftmaxOp>>(ctx,
                                                                           storeExponentials);
  patterns.add<DecomposeLayerNorm, CopyAsMap<BroadcastOp>, CopyAsMap<RelayoutOp>,
               DecomposeConcat>(ctx);
}
