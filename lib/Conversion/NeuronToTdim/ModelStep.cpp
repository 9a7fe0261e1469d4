//===- ModelStep.cpp - one time step of a neuron model ------------------===//
//
// Forward: theta = threshold(pre, p); h = charge(pre, x, p);
// s = h[0] - theta >= 0; next[i] = reset_i(h[i], s, theta).
//
// Backward is the step's vector-Jacobian product in reverse mode: from the
// gradients of s and of each next[i], through the resets (the spike's
// path weighted by the surrogate's derivative at h[0] - theta), then back
// through the charge and threshold regions op by op, to the gradients of
// the states before the step, the inputs and the parameters. One sweep
// whatever the number of states and parameters (forward mode would need
// one per argument). Where forward saved a state's charged value, the
// saved value stands in for the recomputed one.
//
//===----------------------------------------------------------------------===//

#include "ModelStep.h"

#include "nerve/Conversion/NeuronToTdim/NeuronToTdim.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace nerve;
using namespace nerve::neuron;

namespace {

/// A model region cloned at given arguments: the value each of its values
/// took (the primal values the derivatives read).
struct RegionTrace {
  Block *body = nullptr;
  IRMapping primal;

  ValueRange yields() { return llvm::cast<YieldOp>(body->getTerminator()).getValues(); }
  Value yielded(unsigned i) { return primal.lookupOrDefault(yields()[i]); }
};

/// Clones `region` at `args`. A non-null `substitutes[i]` becomes the value
/// of the region's i-th yield once that is computed.
RegionTrace traceRegion(OpBuilder &b, Region &region, ArrayRef<Value> args,
                        ArrayRef<Value> substitutes = {}) {
  RegionTrace trace;
  trace.body = &region.front();
  trace.primal.map(trace.body->getArguments(), args);
  ValueRange yields = trace.yields();
  for (Operation &op : trace.body->without_terminator()) {
    b.clone(op, trace.primal);
    for (auto [i, y] : llvm::enumerate(yields))
      if (i < substitutes.size() && substitutes[i] && y.getDefiningOp() == &op)
        trace.primal.map(y, substitutes[i]);
  }
  return trace;
}

/// Gradients accumulated per value of a region (null: zero).
class Adjoints {
public:
  Adjoints(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  void add(Value key, Value g) {
    if (!g || !llvm::isa<FloatType>(key.getType()))
      return;
    Value &a = adj[key];
    a = a ? arith::AddFOp::create(b, loc, a, g).getResult() : g;
  }
  Value get(Value key) const { return adj.lookup(key); }

private:
  OpBuilder &b;
  Location loc;
  llvm::DenseMap<Value, Value> adj;
};

/// Adds to `adj` the gradients of `op`'s operands from `g`, its result's.
LogicalResult pullBack(OpBuilder &b, Location loc, Operation *op, Value g, RegionTrace &t,
                       Adjoints &adj) {
  auto x = [&](unsigned i) { return t.primal.lookupOrDefault(op->getOperand(i)); };
  auto to = [&](unsigned i, Value v) { adj.add(op->getOperand(i), v); };
  Value r = t.primal.lookup(op->getResult(0));
  Type type = r.getType();
  if (!llvm::isa<FloatType>(type))
    return success(); // logic on comparisons carries no gradient
  auto c = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, v));
  };
  auto mul = [&](Value p, Value q) -> Value { return arith::MulFOp::create(b, loc, p, q); };
  auto neg = [&](Value p) -> Value { return arith::NegFOp::create(b, loc, p); };
  auto div = [&](Value p, Value q) -> Value { return arith::DivFOp::create(b, loc, p, q); };
  auto pick = [&](Value cond, Value yes, Value no) -> Value {
    return arith::SelectOp::create(b, loc, cond, yes, no);
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<arith::ConstantOp, math::FloorOp, math::CeilOp>([&](auto) { return success(); })
      .Case<arith::AddFOp>([&](auto) { to(0, g), to(1, g); return success(); })
      .Case<arith::SubFOp>([&](auto) { to(0, g), to(1, neg(g)); return success(); })
      .Case<arith::NegFOp>([&](auto) { to(0, neg(g)); return success(); })
      .Case<arith::MulFOp>([&](auto) { to(0, mul(g, x(1))), to(1, mul(g, x(0))); return success(); })
      .Case<arith::DivFOp>([&](auto) {
        Value q = div(g, x(1));
        to(0, q), to(1, neg(mul(q, r)));
        return success();
      })
      .Case<math::FmaOp>([&](auto) {
        to(0, mul(g, x(1))), to(1, mul(g, x(0))), to(2, g);
        return success();
      })
      .Case<math::ExpOp>([&](auto) { to(0, mul(g, r)); return success(); })
      .Case<math::LogOp>([&](auto) { to(0, div(g, x(0))); return success(); })
      .Case<math::SqrtOp>([&](auto) { to(0, div(g, mul(c(2.0), r))); return success(); })
      .Case<math::RsqrtOp>([&](auto) {
        // d(x^-1/2) = -1/2 x^-3/2 = -r^3 / 2
        to(0, mul(g, mul(c(-0.5), mul(r, mul(r, r)))));
        return success();
      })
      .Case<math::TanhOp>([&](auto) {
        to(0, mul(g, arith::SubFOp::create(b, loc, c(1.0), mul(r, r))));
        return success();
      })
      .Case<math::AbsFOp>([&](auto) {
        Value nonNeg = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x(0), c(0.0));
        to(0, pick(nonNeg, g, neg(g)));
        return success();
      })
      .Case<arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp, arith::MinNumFOp>(
          [&](Operation *m) {
            bool isMax = isa<arith::MaximumFOp, arith::MaxNumFOp>(m);
            Value lhs = arith::CmpFOp::create(
                b, loc, isMax ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OLE, x(0), x(1));
            to(0, pick(lhs, g, c(0.0))), to(1, pick(lhs, c(0.0), g));
            return success();
          })
      .Case<arith::SelectOp>([&](auto) {
        to(1, pick(x(0), g, c(0.0))), to(2, pick(x(0), c(0.0), g));
        return success();
      })
      .Case<arith::ExtFOp>([&](auto e) {
        to(0, arith::TruncFOp::create(b, loc, e.getIn().getType(), g));
        return success();
      })
      .Case<arith::TruncFOp>([&](auto e) {
        to(0, arith::ExtFOp::create(b, loc, e.getIn().getType(), g));
        return success();
      })
      .Case<math::PowFOp>([&](auto) {
        Value lowered = math::PowFOp::create(b, loc, x(0), arith::SubFOp::create(b, loc, x(1), c(1.0)));
        to(0, mul(mul(g, x(1)), lowered));
        to(1, mul(mul(g, r), math::LogOp::create(b, loc, x(0))));
        return success();
      })
      .Default([&](Operation *other) {
        return other->emitOpError("cannot be differentiated in a neuron model");
      });
}

/// The gradients of the region's arguments from those of its yields.
FailureOr<SmallVector<Value>> reverseRegion(OpBuilder &b, Location loc, RegionTrace &t,
                                            ArrayRef<Value> seeds) {
  Adjoints adj(b, loc);
  for (auto [y, g] : llvm::zip(t.yields(), seeds))
    adj.add(y, g);
  for (Operation &op : llvm::reverse(t.body->without_terminator())) {
    if (op.getNumResults() != 1)
      continue;
    if (Value g = adj.get(op.getResult(0)))
      if (failed(pullBack(b, loc, &op, g, t, adj)))
        return failure();
  }
  SmallVector<Value> grads;
  for (BlockArgument a : t.body->getArguments())
    grads.push_back(adj.get(a));
  return grads;
}

/// `a + b` where either may be null (zero).
Value addOrNull(FloatArith &fa, Value a, Value b) {
  if (!a)
    return b;
  if (!b)
    return a;
  return fa.add(a, b);
}

/// The threshold: the model's number, or its region at (pre, params).
Value buildThreshold(FloatArith &fa, ModelOp model, const ModelStepArgs &args,
                     std::optional<RegionTrace> &trace) {
  if (std::optional<APFloat> v = model.getVThreshold())
    return fa.c(v->convertToDouble());
  SmallVector<Value> in(args.pre);
  in.append(args.params.begin(), args.params.end());
  trace = traceRegion(fa.b, model.getThreshold(), in);
  return trace->yielded(0);
}

RegionTrace buildCharge(FloatArith &fa, ModelOp model, const ModelStepArgs &args) {
  SmallVector<Value> in(args.pre);
  in.append(args.inputs.begin(), args.inputs.end());
  in.append(args.params.begin(), args.params.end());
  return traceRegion(fa.b, model.getCharge(), in, args.charged);
}

/// The amount an add reset adds: its number or its parameter.
Value addAmount(FloatArith &fa, ModelOp model, ResetAttr reset, ArrayRef<Value> params) {
  if (reset.getParam())
    return params[*model.paramIndex(reset.getParam().getValue())];
  return fa.c(reset.getValue().getValueAsDouble());
}

/// A step up to its spike: the regions as traced (what backward
/// differentiates) and the threshold, charged values and spike.
struct StepTrace {
  std::optional<RegionTrace> threshold;
  RegionTrace charge;
  ModelStepValues values; ///< without `next`
};

StepTrace traceStep(FloatArith &fa, ModelOp model, const ModelStepArgs &args) {
  StepTrace t;
  t.values.theta = buildThreshold(fa, model, args, t.threshold);
  t.charge = buildCharge(fa, model, args);
  for (unsigned i = 0; i < model.getStates().size(); ++i)
    t.values.charged.push_back(t.charge.yielded(i));
  t.values.fired = fa.cmp(arith::CmpFPredicate::OGE, fa.sub(t.values.charged[0], t.values.theta),
                          fa.c(0.0));
  return t;
}

} // namespace

Value nerve::resetState(FloatArith fa, ModelOp model, unsigned i, Value h, Value fired,
                        Value theta, ArrayRef<Value> params) {
  ResetAttr reset = model.resetOf(i);
  if (!reset)
    return h;
  switch (reset.getKind()) {
  case ResetKind::hard:
    return fa.select(fired, fa.c(reset.getValue().getValueAsDouble()), h);
  case ResetKind::soft:
    return fa.select(fired, fa.sub(h, theta), h);
  case ResetKind::add:
    return fa.select(fired, fa.add(h, addAmount(fa, model, reset, params)), h);
  }
  return h;
}

ModelStepValues nerve::buildModelStep(FloatArith fa, ModelOp model, const ModelStepArgs &args) {
  ModelStepValues out = traceStep(fa, model, args).values;
  for (unsigned i = 0; i < out.charged.size(); ++i)
    out.next.push_back(
        resetState(fa, model, i, out.charged[i], out.fired, out.theta, args.params));
  return out;
}

namespace {

/// The gradients reaching the charged values, the threshold, the spike and
/// the parameters (through add resets) from those of the reset states.
struct ResetGrads {
  SmallVector<Value> charged;
  Value theta, spike;
  SmallVector<Value> params;
};

ResetGrads pullBackResets(FloatArith &fa, ModelOp model, const ModelStepArgs &args,
                          const ModelStepValues &v, const ModelStepSeeds &seeds,
                          const ModelGradOptions &options) {
  unsigned n = model.getStates().size();
  ResetGrads out;
  out.charged.assign(n, Value());
  out.params.assign(args.params.size(), Value());
  out.spike = seeds.spike;
  Value zero = fa.c(0.0);
  for (unsigned i = 0; i < n; ++i) {
    Value g = i < seeds.next.size() ? seeds.next[i] : Value();
    if (!g)
      continue;
    ResetAttr reset = model.resetOf(i);
    if (!reset) {
      out.charged[i] = addOrNull(fa, out.charged[i], g);
      continue;
    }
    Value h = v.charged[i];
    switch (reset.getKind()) {
    case ResetKind::hard: {
      // next = (1 - s) h + s value.
      Value value = fa.c(reset.getValue().getValueAsDouble());
      out.charged[i] = addOrNull(fa, out.charged[i], fa.select(v.fired, zero, g));
      if (!options.detachReset)
        out.spike = addOrNull(fa, out.spike, fa.mul(g, fa.sub(value, h)));
      else if (reset.getValueGrad())
        out.spike = addOrNull(fa, out.spike, fa.mul(g, value));
      break;
    }
    case ResetKind::soft: {
      // next = h - s theta.
      out.charged[i] = addOrNull(fa, out.charged[i], g);
      if (!options.detachReset)
        out.spike = addOrNull(fa, out.spike, fa.mul(g, fa.sub(zero, v.theta)));
      out.theta = addOrNull(fa, out.theta, fa.select(v.fired, fa.sub(zero, g), zero));
      break;
    }
    case ResetKind::add: {
      // next = h + s amount; the spike is never detached here.
      out.charged[i] = addOrNull(fa, out.charged[i], g);
      out.spike = addOrNull(fa, out.spike, fa.mul(g, addAmount(fa, model, reset, args.params)));
      if (reset.getParam()) {
        unsigned k = *model.paramIndex(reset.getParam().getValue());
        out.params[k] = addOrNull(fa, out.params[k], fa.select(v.fired, g, zero));
      }
      break;
    }
    }
  }
  return out;
}

} // namespace

FailureOr<ModelStepGrads> nerve::buildModelStepGrads(FloatArith fa, ModelOp model,
                                                     const ModelStepArgs &args,
                                                     const ModelStepSeeds &seeds,
                                                     const ModelGradOptions &options) {
  StepTrace trace = traceStep(fa, model, args);
  std::optional<RegionTrace> &thresholdTrace = trace.threshold;
  RegionTrace &charge = trace.charge;
  const ModelStepValues &v = trace.values;
  unsigned n = model.getStates().size();
  Value u = fa.sub(v.charged[0], v.theta);

  ResetGrads r = pullBackResets(fa, model, args, v, seeds, options);
  if (r.spike) {
    Value gu = fa.mul(r.spike, buildSurrogateDerivative(fa.b, fa.loc, options.surrogate, u));
    r.charged[0] = addOrNull(fa, r.charged[0], gu);
    r.theta = addOrNull(fa, r.theta, fa.sub(fa.c(0.0), gu));
  }
  FailureOr<SmallVector<Value>> chargeGrads = reverseRegion(fa.b, fa.loc, charge, r.charged);
  if (failed(chargeGrads))
    return failure();
  ModelStepGrads out;
  unsigned m = args.inputs.size();
  ArrayRef<Value> all = *chargeGrads;
  out.pre.assign(all.begin(), all.begin() + n);
  out.inputs.assign(all.begin() + n, all.begin() + n + m);
  out.params.assign(all.begin() + n + m, all.end());
  for (auto [k, g] : llvm::enumerate(r.params))
    out.params[k] = addOrNull(fa, out.params[k], g);
  if (thresholdTrace && r.theta && !options.detachThreshold) {
    FailureOr<SmallVector<Value>> thresholdGrads =
        reverseRegion(fa.b, fa.loc, *thresholdTrace, {r.theta});
    if (failed(thresholdGrads))
      return failure();
    for (unsigned i = 0; i < n; ++i)
      out.pre[i] = addOrNull(fa, out.pre[i], (*thresholdGrads)[i]);
    for (unsigned k = 0; k < out.params.size(); ++k)
      out.params[k] = addOrNull(fa, out.params[k], (*thresholdGrads)[n + k]);
  }
  return out;
}
