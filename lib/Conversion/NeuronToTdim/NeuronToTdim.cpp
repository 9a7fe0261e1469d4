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
//===----------------------------------------------------------------------===//

#include "nerve/Conversion/NeuronToTdim/NeuronToTdim.h"
#include "nerve/Conversion/Passes.h"

#include "nerve/Dialect/Neuron/IR/NeuronOps.h"
#include "nerve/Dialect/Neuron/Transforms/Passes.h"
#include "nerve/Dialect/Tdim/IR/TdimBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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

/// Builders for the per-neuron code, over one compute type.
struct NeuronBuilder {
  OpBuilder &b;
  Location loc;
  FloatType type;

  Value c(double v) { return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, v)); }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value select(Value c, Value x, Value y) { return arith::SelectOp::create(b, loc, c, x, y); }

  /// A float converted to `to` the way a store and a load would.
  Value convert(Value v, Type to) {
    if (v.getType() == to)
      return v;
    if (llvm::cast<FloatType>(to).getWidth() < llvm::cast<FloatType>(v.getType()).getWidth())
      return arith::TruncFOp::create(b, loc, to, v);
    return arith::ExtFOp::create(b, loc, to, v);
  }

  /// `tensor` at the point `indices` (typed by dimension), in the compute type.
  Value load(Value tensor, ValueRange indices) {
    Type e = llvm::cast<TdimTensorType>(tensor.getType()).getElementType();
    Value v = tdim::LoadOp::create(b, loc, e, tensor, indices);
    return convert(v, type);
  }

  void store(Value v, Value tensor, ValueRange indices) {
    Type e = llvm::cast<TdimTensorType>(tensor.getType()).getElementType();
    tdim::StoreOp::create(b, loc, convert(v, e), tensor, indices);
  }

  /// A spike (i1) stored as 1/0 in the tensor's element type.
  void storeSpike(Value fired, Value tensor, ValueRange indices) {
    Type e = llvm::cast<TdimTensorType>(tensor.getType()).getElementType();
    Value v;
    if (e.isSignlessInteger(1))
      v = fired;
    else if (e.isSignlessInteger(8))
      v = arith::ExtUIOp::create(b, loc, e, fired);
    else
      v = convert(select(fired, c(1.0), c(0.0)), e);
    tdim::StoreOp::create(b, loc, v, tensor, indices);
  }

  /// Fire: h - v_th >= 0, as torch's heaviside(h - v_th) (NaN does not fire).
  Value fire(Value h, double vth) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, sub(h, c(vth)), c(0.0));
  }

  /// Reset: exactly v_reset or h (hard), or h - v_th (soft), when fired.
  Value reset(Value h, Value fired, double vth, std::optional<double> vReset) {
    if (vReset)
      return select(fired, c(*vReset), h);
    return select(fired, sub(h, c(vth)), h);
  }
};

std::optional<double> resetOf(std::optional<APFloat> r) {
  if (!r)
    return std::nullopt;
  return r->convertToDouble();
}

/// The dimensions of `seq` other than `time`, in its layout order.
SmallVector<DimAttr> neuronDims(Value seq, DimAttr time) {
  return tdim::dimsWithout(llvm::cast<TdimTensorType>(seq.getType()), {time});
}

/// Nested parallel tdim.for loops over `dims` (extents from `source`); `body`
/// runs in the innermost with the index of each dimension.
void buildParallelNest(OpBuilder &b, Location loc, Value source, ArrayRef<DimAttr> dims,
                       function_ref<void(OpBuilder &, ValueRange)> body,
                       SmallVector<Value> ivs = {}) {
  if (ivs.size() == dims.size()) {
    body(b, ivs);
    return;
  }
  DimAttr d = dims[ivs.size()];
  auto indexType = tdim::TdimIndexType::get(b.getContext(), d);
  Value zero = tdim::ConstOp::create(b, loc, indexType, b.getI64IntegerAttr(0));
  Value size = tdim::buildSize(b, loc, source, d);
  auto loop = tdim::ForOp::create(b, loc, zero, size, ValueRange{}, /*parallel=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBodyBlock()->getTerminator());
  ivs.push_back(loop.getInductionVar());
  buildParallelNest(b, loc, source, dims, body, ivs);
}

SmallVector<Value> withTime(ValueRange neuron, Value t) {
  SmallVector<Value> indices(neuron);
  indices.push_back(t);
  return indices;
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

LogicalResult lowerForward(GenericOp op) {
  IRRewriter rewriter(op);
  Location loc = op.getLoc();
  DimAttr time = op.getTime();
  auto type = llvm::cast<FloatType>(op.getCharge().front().getArgument(0).getType());
  double vth = op.getVThreshold().convertToDouble();
  std::optional<double> vReset = resetOf(op.getVReset());
  SmallVector<DimAttr> dims = neuronDims(op.getX(), time);

  buildParallelNest(rewriter, loc, op.getX(), dims, [&](OpBuilder &b, ValueRange neuron) {
    NeuronBuilder nb{b, loc, type};
    SmallVector<Value> params;
    for (Value p : op.getParams())
      params.push_back(nb.load(p, {}));
    Value v0 = op.getVInit() ? nb.load(op.getVInit(), neuron) : nb.c(vReset.value_or(0.0));
    auto timeType = tdim::TdimIndexType::get(b.getContext(), time);
    Value zero = tdim::ConstOp::create(b, loc, timeType, b.getI64IntegerAttr(0));
    Value steps = tdim::buildSize(b, loc, op.getX(), time);
    auto loop = tdim::ForOp::create(b, loc, zero, steps, ValueRange{v0});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToEnd(loop.getBodyBlock());
      SmallVector<Value> at = withTime(neuron, loop.getInductionVar());
      Value v = loop.getRegionIterArgs()[0];
      SmallVector<Value> args{v, nb.load(op.getX(), at)};
      args.append(params);
      Value h = inlineCharge(b, op.getCharge(), args);
      Value fired = nb.fire(h, vth);
      Value next = nb.reset(h, fired, vth, vReset);
      nb.storeSpike(fired, op.getSpike(), at);
      if (op.getVSeq())
        nb.store(next, op.getVSeq(), at);
      if (op.getHSeq())
        nb.store(h, op.getHSeq(), at);
      tdim::YieldOp::create(b, loc, ValueRange{next});
    }
    if (op.getVLast())
      nb.store(loop.getResult(0), op.getVLast(), neuron);
  });
  rewriter.eraseOp(op);
  return success();
}

LogicalResult lowerBackward(GenericGradOp op) {
  FailureOr<ChargeDerivatives> derivs = differentiateCharge(op.getCharge());
  if (failed(derivs))
    return failure();
  bool needV = derivs->uses[0], needX = derivs->uses[1];
  if (needX && !op.getX())
    return op.emitOpError("the derivatives of its charge function read the input; pass "
                          "the input sequence as x(...)");

  IRRewriter rewriter(op);
  Location loc = op.getLoc();
  DimAttr time = op.getTime();
  auto type = llvm::cast<FloatType>(op.getCharge().front().getArgument(0).getType());
  double vth = op.getVThreshold().convertToDouble();
  std::optional<double> vReset = resetOf(op.getVReset());
  bool detach = op.getDetachReset();
  SmallVector<DimAttr> dims = neuronDims(op.getHSeq(), time);
  unsigned numGrads = op.getGradParams().size();

  // Per-neuron partial sums of the parameter gradients.
  SmallVector<Value> partials;
  if (!dims.empty())
    for (unsigned k = 0; k < numGrads; ++k)
      partials.push_back(tdim::buildAllocLike(rewriter, loc, op.getHSeq(), dims, type));

  buildParallelNest(rewriter, loc, op.getHSeq(), dims, [&](OpBuilder &b, ValueRange neuron) {
    NeuronBuilder nb{b, loc, type};
    SmallVector<Value> params;
    for (Value p : op.getParams())
      params.push_back(nb.load(p, {}));
    Value v0;
    if (needV)
      v0 = op.getVInit() ? nb.load(op.getVInit(), neuron) : nb.c(vReset.value_or(0.0));
    auto timeType = tdim::TdimIndexType::get(b.getContext(), time);
    Value zero = tdim::ConstOp::create(b, loc, timeType, b.getI64IntegerAttr(0));
    Value steps = tdim::buildSize(b, loc, op.getHSeq(), time);
    SmallVector<Value> inits{nb.c(0.0)};
    for (unsigned k = 0; k < numGrads; ++k)
      inits.push_back(nb.c(0.0));
    auto loop = tdim::ForOp::create(b, loc, zero, steps, inits, /*parallel=*/false,
                                    /*reverse=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToEnd(loop.getBodyBlock());
      Value t = loop.getInductionVar();
      SmallVector<Value> at = withTime(neuron, t);
      Value carry = loop.getRegionIterArgs()[0];

      Value h = nb.load(op.getHSeq(), at);
      Value u = nb.sub(h, nb.c(vth));
      Value fired = nb.fire(h, vth);
      Value psi = buildSurrogateDerivative(b, loc, op.getSurrogate(), u);
      // a = dV[t]/dH[t], through the spike unless the reset is detached.
      Value a;
      if (vReset) {
        a = nb.sub(nb.c(1.0), nb.select(fired, nb.c(1.0), nb.c(0.0)));
        if (!detach)
          a = nb.add(nb.mul(nb.sub(nb.c(*vReset), h), psi), a);
      } else {
        a = detach ? nb.c(1.0) : nb.sub(nb.c(1.0), nb.mul(nb.c(vth), psi));
      }
      Value gS = op.getGradSpike() ? nb.load(op.getGradSpike(), at) : nb.c(0.0);
      Value gV = op.getGradVSeq() ? nb.load(op.getGradVSeq(), at) : nb.c(0.0);
      Value g = nb.add(nb.mul(nb.add(gV, carry), a), nb.mul(gS, psi));

      // The charge function's derivatives at (V[t-1], X[t], params).
      Value vPrev = nb.c(0.0), xv = nb.c(0.0);
      if (needV) {
        Value first = tdim::CmpOp::create(b, loc, tdim::CmpPredicate::eq, t, zero);
        Value tIdx = tdim::ToIndexOp::create(b, loc, t);
        Value one = arith::ConstantIndexOp::create(b, loc, 1);
        Value prevIdx = arith::SelectOp::create(
            b, loc, first, tdim::ToIndexOp::create(b, loc, zero),
            arith::SubIOp::create(b, loc, arith::MaxUIOp::create(b, loc, tIdx, one), one));
        Value prevT = tdim::FromIndexOp::create(b, loc, timeType, prevIdx);
        Value hPrev = nb.load(op.getHSeq(), withTime(neuron, prevT));
        Value vAfter = nb.reset(hPrev, nb.fire(hPrev, vth), vth, vReset);
        vPrev = nb.select(first, v0, vAfter);
      }
      if (needX)
        xv = nb.load(op.getX(), at);
      SmallVector<Value> args{vPrev, xv};
      args.append(params);
      Block *derivBlock = derivs->block.get();
      b.getInsertionBlock()->getOperations().splice(b.getInsertionPoint(),
                                                    derivBlock->getOperations());
      for (auto [arg, value] : llvm::zip(derivBlock->getArguments(), args))
        arg.replaceAllUsesWith(value);
      Value kappa = derivs->derivatives[0], beta = derivs->derivatives[1];

      nb.store(nb.mul(beta, g), op.getGradX(), at);
      SmallVector<Value> next{nb.mul(kappa, g)};
      for (unsigned k = 0; k < numGrads; ++k)
        next.push_back(nb.add(loop.getRegionIterArgs()[1 + k],
                              nb.mul(g, derivs->derivatives[2 + k])));
      tdim::YieldOp::create(b, loc, next);
    }
    if (op.getGradVInit())
      nb.store(loop.getResult(0), op.getGradVInit(), neuron);
    for (unsigned k = 0; k < numGrads; ++k) {
      if (dims.empty())
        nb.store(loop.getResult(1 + k), op.getGradParams()[k], {});
      else
        tdim::StoreOp::create(b, loc, loop.getResult(1 + k), partials[k], neuron);
    }
  });

  // Parameter gradients: the partials summed over every neuron.
  SmallVector<Attribute> over;
  for (DimAttr d : dims)
    over.push_back(d);
  for (unsigned k = 0; k < numGrads && !dims.empty(); ++k) {
    auto reduce = tdim::ReduceOp::create(rewriter, loc, ValueRange{partials[k]},
                                         ValueRange{op.getGradParams()[k]},
                                         rewriter.getArrayAttr(over),
                                         rewriter.getArrayAttr({rewriter.getFloatAttr(type, 0.0)}));
    tdim::buildRegion(rewriter, loc, reduce.getCombine(), {type, type},
                      [](OpBuilder &b, Location l, ValueRange a) {
                        return SmallVector<Value>{arith::AddFOp::create(b, l, a[0], a[1])};
                      });
  }
  rewriter.eraseOp(op);
  return success();
}

struct ConvertNeuronToTdimPass
    : nerve::impl::ConvertNeuronToTdimBase<ConvertNeuronToTdimPass> {
  void runOnOperation() override {
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
      LogicalResult result = isa<GenericOp>(op) ? lowerForward(cast<GenericOp>(op))
                                                : lowerBackward(cast<GenericGradOp>(op));
      if (failed(result))
        return signalPassFailure();
    }
  }
};

} // namespace
