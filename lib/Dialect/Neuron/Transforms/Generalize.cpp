//===- Generalize.cpp - named neurons as charge functions ----------------===//
//
// IF, LIF and PLIF differ only in their charge function, which this pass
// writes out as the `charge` region of neuron.generic / neuron.generic_grad,
// in the arithmetic of SpikingJelly's torch reference (soft reset leaks
// toward 0):
//
//   IF    h = v + x
//   LIF   h = v + (x - (v - v_reset)) / tau        (decay_input)
//         h = v - (v - v_reset) / tau + x         (otherwise)
//   PLIF  h = v + (x - (v - v_reset)) * sigmoid(w) (decay_input)
//         h = v - (v - v_reset) * sigmoid(w) + x  (otherwise)
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/Neuron/Transforms/Passes.h"

#include "nerve/Dialect/Neuron/IR/NeuronOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nerve::neuron {
#define GEN_PASS_DEF_NEURONGENERALIZE
#include "nerve/Dialect/Neuron/Transforms/Passes.h.inc"
} // namespace nerve::neuron

using namespace mlir;
using namespace nerve;
using namespace nerve::neuron;

namespace {

/// Which charge function to write.
struct Charge {
  enum Kind { IF, LIF, PLIF } kind;
  double tau = 2.0;
  bool decayInput = true;
  std::optional<double> vReset; // absent: soft reset, leak toward 0
};

} // namespace

/// The arithmetic type of a neuron over `reference`: f32 for f16/bf16 storage.
static FloatType computeTypeOf(Value reference) {
  Type e = llvm::cast<tdim::TdimTensorType>(reference.getType()).getElementType();
  return llvm::cast<FloatType>(tdim::getComputeType(e));
}

static Value constant(OpBuilder &b, Location loc, FloatType type, double v) {
  return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, v));
}

/// Fills `region` with the charge function `charge` over `type`.
static void buildCharge(OpBuilder &builder, Location loc, Region &region,
                        const Charge &charge, FloatType type) {
  OpBuilder::InsertionGuard guard(builder);
  unsigned numArgs = charge.kind == Charge::PLIF ? 3 : 2;
  SmallVector<Type> types(numArgs, type);
  Block *block = builder.createBlock(&region, {}, types,
                                     SmallVector<Location>(numArgs, loc));
  OpBuilder b = OpBuilder::atBlockEnd(block);
  Value v = block->getArgument(0), x = block->getArgument(1);
  Value h;
  if (charge.kind == Charge::IF) {
    h = arith::AddFOp::create(b, loc, v, x);
  } else {
    // The leak: v - v_reset, or v itself for soft reset.
    Value gap = charge.vReset && *charge.vReset != 0.0
                    ? arith::SubFOp::create(b, loc, v, constant(b, loc, type, *charge.vReset))
                          .getResult()
                    : v;
    auto scale = [&](Value a) -> Value {
      if (charge.kind == Charge::LIF)
        return arith::DivFOp::create(b, loc, a, constant(b, loc, type, charge.tau));
      Value w = block->getArgument(2);
      Value one = constant(b, loc, type, 1.0);
      Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, w));
      Value sigmoid = arith::DivFOp::create(b, loc, one, arith::AddFOp::create(b, loc, one, e));
      return arith::MulFOp::create(b, loc, a, sigmoid);
    };
    if (charge.decayInput)
      h = arith::AddFOp::create(b, loc, v, scale(arith::SubFOp::create(b, loc, x, gap)));
    else
      h = arith::AddFOp::create(b, loc, arith::SubFOp::create(b, loc, v, scale(gap)), x);
  }
  YieldOp::create(b, loc, h);
}

static std::optional<double> resetOf(std::optional<APFloat> r) {
  if (!r)
    return std::nullopt;
  return r->convertToDouble();
}

template <typename OpTy>
static Charge chargeOf(OpTy op) {
  Charge c;
  c.vReset = resetOf(op.getVReset());
  if constexpr (std::is_same_v<OpTy, IFOp> || std::is_same_v<OpTy, IFGradOp>) {
    c.kind = Charge::IF;
  } else if constexpr (std::is_same_v<OpTy, LIFOp> || std::is_same_v<OpTy, LIFGradOp>) {
    c.kind = Charge::LIF;
    c.tau = op.getTau().convertToDouble();
    c.decayInput = op.getDecayInput();
  } else {
    c.kind = Charge::PLIF;
    c.decayInput = op.getDecayInput();
  }
  return c;
}

namespace {

template <typename OpTy>
struct GeneralizeForward : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    SmallVector<Value> params;
    if constexpr (std::is_same_v<OpTy, PLIFOp>)
      params.push_back(op.getW());
    auto generic = GenericOp::create(rewriter, op.getLoc(), op.getX(), op.getVInit(), params,
                                     op.getSpike(), op.getVSeq(), op.getHSeq(), op.getVLast(),
                                     op.getTime(), op.getVThresholdAttr(), op.getVResetAttr());
    buildCharge(rewriter, op.getLoc(), generic.getCharge(), chargeOf(op),
                computeTypeOf(op.getX()));
    rewriter.eraseOp(op);
    return success();
  }
};

template <typename OpTy>
struct GeneralizeBackward : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    SmallVector<Value> params, gradParams;
    Value x, vInit;
    if constexpr (std::is_same_v<OpTy, PLIFGradOp>) {
      params.push_back(op.getW());
      gradParams.push_back(op.getGradW());
      x = op.getX();
      vInit = op.getVInit();
    }
    auto generic = GenericGradOp::create(
        rewriter, op.getLoc(), op.getHSeq(), x, vInit, params, op.getGradSpike(),
        op.getGradVSeq(), op.getGradVLast(), op.getGradX(), op.getGradVInit(), gradParams,
        op.getTime(),
        op.getVThresholdAttr(), op.getVResetAttr(), op.getDetachResetAttr(),
        op.getSurrogateAttr());
    buildCharge(rewriter, op.getLoc(), generic.getCharge(), chargeOf(op),
                computeTypeOf(op.getHSeq()));
    rewriter.eraseOp(op);
    return success();
  }
};

struct NeuronGeneralizePass
    : nerve::neuron::impl::NeuronGeneralizeBase<NeuronGeneralizePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateGeneralizationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void nerve::neuron::populateGeneralizationPatterns(RewritePatternSet &patterns) {
  patterns.add<GeneralizeForward<IFOp>, GeneralizeForward<LIFOp>, GeneralizeForward<PLIFOp>,
               GeneralizeBackward<IFGradOp>, GeneralizeBackward<LIFGradOp>,
               GeneralizeBackward<PLIFGradOp>>(patterns.getContext());
}
