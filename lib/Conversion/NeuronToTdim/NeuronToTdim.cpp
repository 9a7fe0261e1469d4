//===- NeuronToTdim.cpp - generic neurons to tdim loops -----------------===//
//
// forward:  for every neuron (parallel):  v = v_init
//             for t in time (sequential): h = charge(v, x[t], p...)
//                                          s = h >= v_th;  v = reset(h, s)
//                                          store s, v, h as asked
//             store v as v_last
// backward: for every neuron (parallel):  carry = 0
//             for t in time, reversed:     psi = g'(h[t] - v_th); a = dv/dh
//                                          G_H = (gV[t] + carry) * a + gS[t] * psi
//                                          grad_x[t] = dh/dx * G_H
//                                          carry = dh/dv * G_H;  acc += dh/dp * G_H
//             grad_v_init = carry;  partial[neuron] = acc
//           grad_p = sum of partial over all neurons (tdim.reduce, fixed order)
//
// The time loops run in blocks of `time-block` steps, each block's loads
// first: the recurrence is sequential, its inputs are not, and a GPU thread
// needs several loads in flight to approach the memory bandwidth.
//
//===----------------------------------------------------------------------===//

#include "TimeLoops.h"
#include "nerve/Conversion/NeuronToTdim/NeuronToTdim.h"
#include "nerve/Conversion/Passes.h"

#include "nerve/Dialect/Neuron/IR/NeuronOps.h"
#include "nerve/Dialect/Neuron/Transforms/Passes.h"
#include "nerve/Dialect/Tdim/IR/TdimBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nerve {
#define GEN_PASS_DEF_CONVERTNEURONTOTDIM
#include "nerve/Conversion/Passes.h.inc"
} // namespace nerve

using namespace mlir;
using namespace nerve;
using namespace nerve::neuron;
using tdim::DimAttr;
using tdim::TdimTensorType;

namespace {

std::optional<double> resetOf(std::optional<APFloat> r) {
  if (!r)
    return std::nullopt;
  return r->convertToDouble();
}

/// Clones the charge region with its arguments bound to `args`; returns h.
Value inlineCharge(OpBuilder &b, Region &charge, ValueRange args) {
  Block &block = charge.front();
  IRMapping mapping;
  mapping.map(block.getArguments(), args);
  for (Operation &op : block.without_terminator())
    b.clone(op, mapping);
  return mapping.lookup(llvm::cast<YieldOp>(block.getTerminator()).getH());
}

/// The product `op` can be the scanning epilogue of: it writes its spikes
/// alone (no initial potential, no sequences, no last potential).
tdim::ContractOp fusableProduct(GenericOp op) {
  if (op.getVInit() || op.getVSeq() || op.getHSeq() || op.getVLast())
    return {};
  return productFeeding(op.getX(), op, op.getSpike());
}

/// x = lhs . rhs ; neuron(x) -> one contraction scanning time whose
/// epilogue is the neuron's step (the product rounded as x held it, the
/// potential carried), so x never reaches memory.
void fuseIntoProduct(GenericOp op, tdim::ContractOp product) {
  IRRewriter rewriter(op);
  Location loc = op.getLoc();
  auto type = llvm::cast<FloatType>(op.getCharge().front().getArgument(0).getType());
  double vth = op.getVThreshold().convertToDouble();
  std::optional<double> vReset = resetOf(op.getVReset());
  Type xElement = llvm::cast<TdimTensorType>(op.getX().getType()).getElementType();
  Type sumType = tdim::getComputeType(xElement);
  SmallVector<Value> params(op.getParams());
  auto fused = tdim::ContractOp::create(
      rewriter, loc, product.getLhs(), product.getRhs(), params, op.getSpike(),
      /*accumulate=*/false, op.getTime(),
      rewriter.getArrayAttr({rewriter.getFloatAttr(type, vReset.value_or(0.0))}));
  fused->setDiscardableAttrs(product->getDiscardableAttrDictionary());
  SmallVector<Type> argTypes{sumType};
  for (Value p : params)
    argTypes.push_back(llvm::cast<TdimTensorType>(p.getType()).getElementType());
  argTypes.push_back(type);
  Block *body = rewriter.createBlock(&fused.getEpilogue(), {}, argTypes,
                                     SmallVector<Location>(argTypes.size(), loc));
  NeuronBuilder nb{{rewriter, loc, type}};
  Value x = nb.convert(nb.convert(body->getArgument(0), xElement), type);
  Value v = body->getArguments().back();
  SmallVector<Value> args{v, x};
  for (BlockArgument p : body->getArguments().slice(1, params.size()))
    args.push_back(nb.convert(p, type));
  Value h = inlineCharge(rewriter, op.getCharge(), args);
  Value fired = nb.fire(h, vth);
  Value next = nb.reset(h, fired, vth, vReset);
  Type spikeElement = llvm::cast<TdimTensorType>(op.getSpike().getType()).getElementType();
  tdim::YieldOp::create(rewriter, loc, ValueRange{nb.spikeValue(fired, spikeElement), next});
  Operation *alloc = op.getX().getDefiningOp();
  rewriter.eraseOp(op);
  rewriter.eraseOp(product);
  if (alloc->use_empty())
    rewriter.eraseOp(alloc);
}

LogicalResult lowerForward(GenericOp op, int64_t timeBlock) {
  if (tdim::ContractOp product = fusableProduct(op)) {
    fuseIntoProduct(op, product);
    return success();
  }
  IRRewriter rewriter(op);
  Location loc = op.getLoc();
  DimAttr time = op.getTime();
  auto type = llvm::cast<FloatType>(op.getCharge().front().getArgument(0).getType());
  double vth = op.getVThreshold().convertToDouble();
  std::optional<double> vReset = resetOf(op.getVReset());
  SmallVector<DimAttr> dims = neuronDims(op.getX(), time);

  buildParallelNest(rewriter, loc, op.getX(), dims, [&](OpBuilder &b, ValueRange neuron) {
    NeuronBuilder nb{{b, loc, type}};
    SmallVector<Value> params;
    for (Value p : op.getParams())
      params.push_back(nb.load(p, {}));
    Value v0 = op.getVInit() ? nb.load(op.getVInit(), neuron) : nb.c(vReset.value_or(0.0));
    Value steps = tdim::buildSize(b, loc, op.getX(), time);
    auto load = [&](OpBuilder &b, Value t) -> StepValues {
      NeuronBuilder nb{{b, loc, type}};
      return {nb.load(op.getX(), withTime(neuron, t))};
    };
    auto compute = [&](OpBuilder &b, Value t, const StepValues &loaded, const StepValues *,
                       bool, ValueRange carried) -> SmallVector<Value> {
      NeuronBuilder nb{{b, loc, type}};
      SmallVector<Value> at = withTime(neuron, t);
      SmallVector<Value> args{carried[0], loaded[0]};
      args.append(params);
      Value h = inlineCharge(b, op.getCharge(), args);
      Value fired = nb.fire(h, vth);
      Value next = nb.reset(h, fired, vth, vReset);
      nb.storeSpike(fired, op.getSpike(), at);
      if (op.getVSeq())
        nb.store(next, op.getVSeq(), at);
      if (op.getHSeq())
        nb.store(h, op.getHSeq(), at);
      return {next};
    };
    SequenceFacts facts = sequenceFacts(op.getX(), time);
    int64_t block = chooseForwardBlock(timeBlock, facts);
    SmallVector<Value> last =
        buildTimeLoop(b, loc, time, steps, {v0}, block, /*reverse=*/false, load, compute,
                      pipelineBlocks(facts, block, block, kPipelinedValues));
    if (op.getVLast())
      nb.store(last[0], op.getVLast(), neuron);
  });
  rewriter.eraseOp(op);
  return success();
}

/// The derivative block built once per neuron, before its time loop, at
/// v = x = h = 0: what in it reads only the parameters (the slope of a
/// charge affine in its input, the factors of the parameters' derivatives)
/// is then right, and the rest unused.
IRMapping atParameters(FloatArith fa, const ChargeDerivatives &derivs, ValueRange params) {
  Value zero = fa.c(0.0);
  SmallVector<Value> args{zero, zero};
  args.append(params.begin(), params.end());
  if (derivs.takesOutput)
    args.push_back(zero);
  IRMapping mapping;
  mapping.map(derivs.block->getArguments(), args);
  for (Operation &o : *derivs.block)
    fa.b.clone(o, mapping);
  return mapping;
}

/// The input recovered from h for a charge affine in it: h = A + beta * x,
/// with A the charge at x = 0, so x = (h - A) * (1 / beta). For PLIF,
/// x - (v - v_reset) is then (h - v) / d, what SpikingJelly computes dh/dd
/// from.
Value recoverInput(FloatArith fa, Region &charge, Value h, Value v, ValueRange params,
                   Value inverseBeta) {
  SmallVector<Value> args{v, fa.c(0.0)};
  args.append(params.begin(), params.end());
  Block &body = charge.front();
  IRMapping atZero;
  atZero.map(body.getArguments(), args);
  for (Operation &o : body.without_terminator())
    fa.b.clone(o, atZero);
  Value a = atZero.lookupOrDefault(llvm::cast<neuron::YieldOp>(body.getTerminator()).getH());
  return fa.mul(fa.sub(h, a), inverseBeta);
}

/// Lowers one neuron.generic_grad: per neuron, a reverse walk over time
/// that carries dL/dV and the parameters' partial sums, then those sums
/// over every neuron.
class BackwardLowering {
public:
  BackwardLowering(GenericGradOp op, ChargeDerivatives &derivs)
      : op(op), derivs(derivs), loc(op.getLoc()), time(op.getTime()),
        type(llvm::cast<FloatType>(op.getCharge().front().getArgument(0).getType())),
        vth(op.getVThreshold().convertToDouble()), vReset(resetOf(op.getVReset())),
        detach(op.getDetachReset()), dims(neuronDims(op.getHSeq(), time)),
        numGrads(op.getGradParams().size()), recoverX(derivs.uses[1] && !op.getX()),
        readX(derivs.uses[1] && op.getX()), needV(derivs.uses[0] || recoverX) {}

  LogicalResult lower(int64_t timeBlock) {
    if (recoverX && !derivs.affineInInput)
      return op.emitOpError("the derivatives of its charge function read the input, and the "
                            "charge is not of the form A(v, params) + B(params) * x that "
                            "would let backward recover it from h_seq; pass the input "
                            "sequence as x(...)");
    IRRewriter rewriter(op);
    // Per-neuron partial sums of the parameter gradients.
    if (!dims.empty())
      for (unsigned k = 0; k < numGrads; ++k)
        partials.push_back(tdim::buildAllocLike(rewriter, loc, op.getHSeq(), dims, type));
    buildParallelNest(rewriter, loc, op.getHSeq(), dims, [&](OpBuilder &b, ValueRange neuron) {
      lowerNeuron(b, neuron, timeBlock);
    });
    sumParameterGradients(rewriter);
    rewriter.eraseOp(op);
    return success();
  }

private:
  GenericGradOp op;
  ChargeDerivatives &derivs;
  Location loc;
  DimAttr time;
  FloatType type;
  double vth;
  std::optional<double> vReset;
  bool detach;
  SmallVector<DimAttr> dims;
  unsigned numGrads;
  bool recoverX; ///< x recovered from h: the derivatives read it, no x given
  bool readX;    ///< x loaded: the derivatives read it and it is given
  bool needV;    ///< the derivatives (or recovering x) read V[t-1]
  SmallVector<Value> partials;

  /// What one neuron's walk shares between its steps.
  struct NeuronWalk {
    ValueRange neuron;
    SmallVector<Value> params;
    Value v0, inverseBeta, zero;
    IRMapping perNeuron;
    tdim::TdimIndexType timeType;
  };

  /// One neuron's reverse walk over time and its gradient outputs.
  void lowerNeuron(OpBuilder &b, ValueRange neuron, int64_t timeBlock) {
    NeuronBuilder nb{{b, loc, type}};
    NeuronWalk walk;
    walk.neuron = neuron;
    for (Value p : op.getParams())
      walk.params.push_back(nb.load(p, {}));
    if (needV)
      walk.v0 = op.getVInit() ? nb.load(op.getVInit(), neuron) : nb.c(vReset.value_or(0.0));
    // Per neuron: 1 / (dh/dx) to recover x from h, and the parameters'
    // factors, which multiply each sum over time once.
    bool anyFactor = llvm::any_of(derivs.factors, [](Value f) { return bool(f); });
    if (recoverX || anyFactor)
      walk.perNeuron = atParameters(nb, derivs, walk.params);
    walk.inverseBeta =
        recoverX ? nb.div(nb.c(1.0), walk.perNeuron.lookup(derivs.derivatives[1])) : Value();
    walk.timeType = tdim::TdimIndexType::get(b.getContext(), time);
    walk.zero = tdim::ConstOp::create(b, loc, walk.timeType, b.getI64IntegerAttr(0));
    Value steps = tdim::buildSize(b, loc, op.getHSeq(), time);
    // dL/dV carried into the last step: the last potential's gradient.
    SmallVector<Value> inits{op.getGradVLast() ? nb.load(op.getGradVLast(), neuron)
                                               : nb.c(0.0)};
    for (unsigned k = 0; k < numGrads; ++k)
      inits.push_back(nb.c(0.0));
    auto load = [&](OpBuilder &sb, Value t) { return loadStep(sb, walk, t); };
    auto compute = [&](OpBuilder &sb, Value t, const StepValues &loaded,
                       const StepValues *previous, bool mayBeFirst, ValueRange carried) {
      return computeStep(sb, walk, t, loaded, previous, mayBeFirst, carried);
    };
    // The streams `load` reads: h, and the gradients and x when present.
    int64_t streams = 1 + (op.getGradSpike() ? 1 : 0) + (op.getGradVSeq() ? 1 : 0) +
                      (readX ? 1 : 0);
    SequenceFacts facts = sequenceFacts(op.getHSeq(), time);
    int64_t block = chooseBackwardBlock(timeBlock, facts, streams);
    SmallVector<Value> results = buildTimeLoop(
        b, loc, time, steps, inits, block, /*reverse=*/true, load, compute,
        pipelineBlocks(facts, block, kBackwardValuesPerStep * block, kBackwardPipelinedValues));
    if (op.getGradVInit())
      nb.store(results[0], op.getGradVInit(), neuron);
    for (unsigned k = 0; k < numGrads; ++k) {
      Value sum = results[1 + k];
      if (Value factor = derivs.factors[2 + k])
        sum = nb.mul(sum, walk.perNeuron.lookup(factor));
      if (dims.empty())
        nb.store(sum, op.getGradParams()[k], {});
      else
        tdim::StoreOp::create(b, loc, sum, partials[k], neuron);
    }
  }

  /// A step loads h, the upstream gradients and, when the derivatives need
  /// it, x: [h, gS, gV, x] (absent ones are constants).
  StepValues loadStep(OpBuilder &b, const NeuronWalk &walk, Value t) {
    NeuronBuilder nb{{b, loc, type}};
    SmallVector<Value> at = withTime(walk.neuron, t);
    return {nb.load(op.getHSeq(), at),
            op.getGradSpike() ? nb.load(op.getGradSpike(), at) : nb.c(0.0),
            op.getGradVSeq() ? nb.load(op.getGradVSeq(), at) : nb.c(0.0),
            readX ? nb.load(op.getX(), at) : nb.c(0.0)};
  }

  /// dL/dH[t] from the step's loads and dL/dV[t] carried from t + 1, and
  /// the surrogate's derivative at h.
  std::pair<Value, Value> gradientAtH(NeuronBuilder &nb, OpBuilder &b, Value h, Value gS,
                                      Value gV, Value carry) {
    Value u = nb.sub(h, nb.c(vth));
    Value fired = nb.fire(h, vth);
    Value psi = buildSurrogateDerivative(b, loc, op.getSurrogate(), u);
    // a = dV[t]/dH[t], through the spike unless the reset is detached.
    Value a;
    if (vReset) {
      Value one = nb.c(1.0), spikeOne = nb.c(1.0), spikeZero = nb.c(0.0);
      a = nb.sub(one, nb.select(fired, spikeOne, spikeZero));
      // a - (h - v_reset) * psi: for v_reset = 0 the subtraction of 0
      // folds away, one operation fewer than (v_reset - h) * psi + a,
      // which has the same bits (negation is exact).
      if (!detach)
        a = nb.sub(a, nb.mul(nb.sub(h, nb.c(*vReset)), psi));
    } else if (detach) {
      a = nb.c(1.0);
    } else {
      Value one = nb.c(1.0);
      a = nb.sub(one, nb.mul(nb.c(vth), psi));
    }
    Value throughV = nb.mul(nb.add(gV, carry), a);
    return {nb.add(throughV, nb.mul(gS, psi)), psi};
  }

  /// V[t-1], the reset of H[t-1] (v_init at t = 0): from the previous
  /// step's loads inside a block, else loaded here.
  Value previousV(NeuronBuilder &nb, OpBuilder &b, const NeuronWalk &walk, Value t,
                  const StepValues *previous, bool mayBeFirst) {
    Value vPrev = nb.c(0.0);
    if (needV && previous) {
      Value hPrev = (*previous)[0];
      vPrev = nb.reset(hPrev, nb.fire(hPrev, vth), vth, vReset);
      if (mayBeFirst) {
        Value first = tdim::CmpOp::create(b, loc, tdim::CmpPredicate::eq, t, walk.zero);
        vPrev = nb.select(first, walk.v0, vPrev);
      }
    } else if (needV) {
      Value first = tdim::CmpOp::create(b, loc, tdim::CmpPredicate::eq, t, walk.zero);
      Value tIdx = tdim::ToIndexOp::create(b, loc, t);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      Value prevIdx = arith::SubIOp::create(b, loc, arith::MaxUIOp::create(b, loc, tIdx, one),
                                            one);
      Value prevT = tdim::FromIndexOp::create(b, loc, walk.timeType, prevIdx);
      Value hPrev = nb.load(op.getHSeq(), withTime(walk.neuron, prevT));
      Value vAfter = nb.reset(hPrev, nb.fire(hPrev, vth), vth, vReset);
      vPrev = nb.select(first, walk.v0, vAfter);
    }
    return vPrev;
  }

  /// One step of the reverse walk: grad_x[t], and the carried dL/dV and
  /// parameter sums for t - 1.
  SmallVector<Value> computeStep(OpBuilder &b, const NeuronWalk &walk, Value t,
                                 const StepValues &loaded, const StepValues *previous,
                                 bool mayBeFirst, ValueRange carried) {
    NeuronBuilder nb{{b, loc, type}};
    Value h = loaded[0], gS = loaded[1], gV = loaded[2], xv = loaded[3];
    Value g = gradientAtH(nb, b, h, gS, gV, carried[0]).first;
    // The charge function's derivatives at (V[t-1], X[t], params).
    Value vPrev = previousV(nb, b, walk, t, previous, mayBeFirst);
    if (recoverX)
      xv = recoverInput(nb, op.getCharge(), h, vPrev, walk.params, walk.inverseBeta);
    SmallVector<Value> args{vPrev, xv};
    args.append(walk.params);
    if (derivs.takesOutput)
      args.push_back(h);
    Block *derivBlock = derivs.block.get();
    IRMapping mapping;
    mapping.map(derivBlock->getArguments(), args);
    for (Operation &o : *derivBlock)
      b.clone(o, mapping);
    auto derivative = [&](unsigned i) { return mapping.lookupOrDefault(derivs.derivatives[i]); };
    Value kappa = derivative(0), beta = derivative(1);
    nb.store(nb.mul(beta, g), op.getGradX(), withTime(walk.neuron, t));
    SmallVector<Value> next{nb.mul(kappa, g)};
    for (unsigned k = 0; k < numGrads; ++k)
      next.push_back(nb.add(carried[1 + k], nb.mul(g, derivative(2 + k))));
    return next;
  }

  /// Parameter gradients: the partials summed over every neuron.
  void sumParameterGradients(IRRewriter &rewriter) {
    SmallVector<Attribute> over;
    for (DimAttr d : dims)
      over.push_back(d);
    for (unsigned k = 0; k < numGrads && !dims.empty(); ++k) {
      auto reduce = tdim::ReduceOp::create(
          rewriter, loc, ValueRange{partials[k]}, ValueRange{op.getGradParams()[k]},
          rewriter.getArrayAttr(over), rewriter.getArrayAttr({rewriter.getFloatAttr(type, 0.0)}));
      tdim::buildRegion(rewriter, loc, reduce.getCombine(), {type, type},
                        [](OpBuilder &b, Location l, ValueRange a) {
                          return SmallVector<Value>{arith::AddFOp::create(b, l, a[0], a[1])};
                        });
    }
  }
};

LogicalResult lowerBackward(GenericGradOp op, int64_t timeBlock) {
  // Without x, derivatives that read the input take it from h (undoing its
  // path to h, or, for a charge merely affine in it, as a whole): one
  // stream fewer than reading it.
  FailureOr<ChargeDerivatives> derivs =
      differentiateCharge(op.getCharge(), /*throughOutput=*/!op.getX());
  if (failed(derivs))
    return failure();
  return BackwardLowering(op, *derivs).lower(timeBlock);
}

struct ConvertNeuronToTdimPass
    : nerve::impl::ConvertNeuronToTdimBase<ConvertNeuronToTdimPass> {
  using Base::Base;
  void runOnOperation() override {
    if (timeBlock < 0 || timeBlock > kMaxTimeBlock) {
      mlir::emitError(getOperation()->getLoc())
          << "time-block must be between 0 (automatic) and " << kMaxTimeBlock << ", not "
          << static_cast<int64_t>(timeBlock);
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    neuron::populateGeneralizationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<GenericOp, GenericGradOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      LogicalResult result = isa<GenericOp>(op)
                                 ? lowerForward(cast<GenericOp>(op), timeBlock)
                                 : lowerBackward(cast<GenericGradOp>(op), timeBlock);
      if (failed(result))
        return signalPassFailure();
    }
    SmallVector<Operation *> modelUses;
    SmallVector<ModelOp> models;
    getOperation()->walk([&](Operation *op) {
      if (isa<ForwardOp, BackwardOp>(op))
        modelUses.push_back(op);
      else if (auto model = dyn_cast<ModelOp>(op))
        models.push_back(model);
    });
    for (Operation *op : modelUses)
      if (failed(lowerModelNeuron(op, timeBlock)))
        return signalPassFailure();
    // Models are definitions: nothing refers to them once their uses are
    // loops.
    for (ModelOp model : models)
      model.erase();
  }
};

} // namespace
