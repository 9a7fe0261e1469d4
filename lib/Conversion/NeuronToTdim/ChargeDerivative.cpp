//===- ChargeDerivative.cpp - differentiating a charge function ---------===//
//
// Forward-mode differentiation of a neuron's charge region h = f(v, x, p...)
// with respect to each argument: every op gets, besides its value, one
// tangent per argument (absent when structurally zero, so constants and
// paths that do not depend on an argument cost nothing). The backward
// recurrence needs dh/dv (kappa), dh/dx (beta) and dh/dp (parameter
// gradients); after dead-code removal the block also tells which arguments
// the derivatives read, so backward loads nothing it does not need. When
// backward is not given x, derivatives that read it take it from h: by
// undoing x's path to h step by step where it is a chain (PLIF's dh/dw
// reads x - v as (h - v) / d, the way SpikingJelly computes it), else, for
// a charge affine in x, through the lowering's x = (h - A) / beta.
//
//===----------------------------------------------------------------------===//

#include "nerve/Conversion/NeuronToTdim/NeuronToTdim.h"

#include "nerve/Dialect/Neuron/IR/NeuronOps.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace nerve;

namespace {

/// Tangents of values along one direction; a missing entry is zero.
using Tangents = llvm::DenseMap<Value, Value>;

class Differentiator {
public:
  Differentiator(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  /// Adds the tangents of `op`'s result (whose primal clone is `result`,
  /// with operands `ops` already mapped) along every direction.
  LogicalResult tangentOf(Operation *op, ValueRange ops, Value result,
                          MutableArrayRef<Tangents> dirs) {
    for (Tangents &t : dirs) {
      auto td = [&](unsigned i) -> Value { return t.lookup(ops[i]); };
      FailureOr<Value> d = rule(op, ops, result, td);
      if (failed(d))
        return failure();
      if (*d)
        t[result] = *d;
    }
    return success();
  }

private:
  Value add(Value x, Value y) {
    if (!x) return y;
    if (!y) return x;
    return arith::AddFOp::create(b, loc, x, y);
  }
  Value mul(Value x, Value y) {
    if (!x || !y) return {};
    return arith::MulFOp::create(b, loc, x, y);
  }
  Value neg(Value x) { return x ? arith::NegFOp::create(b, loc, x).getResult() : Value(); }
  Value div(Value x, Value y) {
    if (!x) return {};
    return arith::DivFOp::create(b, loc, x, y);
  }
  Value constant(Type t, double v) {
    return arith::ConstantOp::create(b, loc, t, b.getFloatAttr(t, v));
  }

  /// d(result) from the operands' tangents; null for zero.
  FailureOr<Value> rule(Operation *op, ValueRange x, Value r,
                        function_ref<Value(unsigned)> t) {
    return llvm::TypeSwitch<Operation *, FailureOr<Value>>(op)
        .Case<arith::ConstantOp>([&](auto) { return Value(); })
        .Case<arith::AddFOp>([&](auto) { return add(t(0), t(1)); })
        .Case<arith::SubFOp>([&](auto) { return add(t(0), neg(t(1))); })
        .Case<arith::NegFOp>([&](auto) { return neg(t(0)); })
        .Case<arith::MulFOp>([&](auto) {
          Value left = mul(t(0), x[1]);
          return add(left, mul(x[0], t(1)));
        })
        .Case<arith::DivFOp>([&](auto) {
          // d(a/b) = (da - (a/b) db) / b
          Value num = add(t(0), neg(mul(r, t(1))));
          return div(num, x[1]);
        })
        .Case<math::FmaOp>([&](auto) {
          Value left = mul(t(0), x[1]);
          return add(add(left, mul(x[0], t(1))), t(2));
        })
        .Case<math::ExpOp>([&](auto) { return mul(t(0), r); })
        .Case<math::LogOp>([&](auto) { return div(t(0), x[0]); })
        .Case<math::SqrtOp>([&](auto) {
          return div(t(0), mul(constant(r.getType(), 2.0), r));
        })
        .Case<math::TanhOp>([&](auto) {
          Value one = constant(r.getType(), 1.0);
          return t(0) ? mul(t(0), arith::SubFOp::create(b, loc, one,
                                                        arith::MulFOp::create(b, loc, r, r)))
                      : Value();
        })
        .Case<math::AbsFOp>([&](auto) -> Value {
          if (!t(0))
            return {};
          Value nonNeg = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x[0],
                                               constant(r.getType(), 0.0));
          return arith::SelectOp::create(b, loc, nonNeg, t(0), neg(t(0)));
        })
        .Case<arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp, arith::MinNumFOp>(
            [&](Operation *m) -> Value {
              if (!t(0) && !t(1))
                return {};
              bool isMax = isa<arith::MaximumFOp, arith::MaxNumFOp>(m);
              Value pickLhs = arith::CmpFOp::create(
                  b, loc, isMax ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OLE, x[0],
                  x[1]);
              Value zero = constant(r.getType(), 0.0);
              return arith::SelectOp::create(b, loc, pickLhs, t(0) ? t(0) : zero,
                                             t(1) ? t(1) : zero);
            })
        .Case<arith::SelectOp>([&](auto) -> Value {
          if (!t(1) && !t(2))
            return {};
          Value zero = constant(r.getType(), 0.0);
          return arith::SelectOp::create(b, loc, x[0], t(1) ? t(1) : zero,
                                         t(2) ? t(2) : zero);
        })
        .Case<arith::ExtFOp>([&](auto) -> Value {
          return t(0) ? arith::ExtFOp::create(b, loc, r.getType(), t(0)).getResult() : Value();
        })
        .Case<arith::TruncFOp>([&](auto) -> Value {
          return t(0) ? arith::TruncFOp::create(b, loc, r.getType(), t(0)).getResult()
                      : Value();
        })
        .Case<math::PowFOp>([&](auto) -> Value {
          // d(a^c) = c a^(c-1) da for an exponent independent of the
          // arguments; a varying exponent adds a^c log(a) dc.
          Value one = constant(r.getType(), 1.0);
          Value base = t(0) ? mul(mul(t(0), x[1]),
                                  math::PowFOp::create(b, loc, x[0],
                                                       arith::SubFOp::create(b, loc, x[1], one)))
                            : Value();
          Value expo = t(1) ? mul(mul(t(1), r), math::LogOp::create(b, loc, x[0])) : Value();
          return add(base, expo);
        })
        .Case<arith::CmpFOp>([&](auto) { return Value(); })
        .Default([&](Operation *other) -> FailureOr<Value> {
          return other->emitOpError()
                 << "cannot be differentiated in a neuron's charge function (nerve "
                    "differentiates arith add, sub, mul, div, neg, select, min/max, "
                    "extf/truncf and math exp, log, sqrt, tanh, absf, fma, powf)";
        });
  }

  OpBuilder &b;
  Location loc;
};

/// Whether `op` keeps its result affine in x when the operands marked in
/// `dependsOnX` are affine in x (and the others free of it).
bool preservesAffinity(Operation *op, function_ref<bool(Value)> dependsOnX) {
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case<arith::AddFOp, arith::SubFOp, arith::NegFOp, arith::ExtFOp>([](auto) { return true; })
      .Case<arith::MulFOp>([&](auto m) {
        return !(dependsOnX(m.getLhs()) && dependsOnX(m.getRhs()));
      })
      .Case<arith::DivFOp>([&](auto d) { return !dependsOnX(d.getRhs()); })
      .Case<math::FmaOp>([&](auto f) { return !(dependsOnX(f.getA()) && dependsOnX(f.getB())); })
      .Case<arith::SelectOp>([&](auto s) { return !dependsOnX(s.getCondition()); })
      .Default([](Operation *) { return false; });
}

/// Whether the charge's h is affine in its input x (argument 1), with a
/// slope that is not structurally zero.
bool isAffineInInput(Block &body) {
  llvm::DenseSet<Value> dependsOnX{body.getArgument(1)};
  auto depends = [&](Value v) { return dependsOnX.contains(v); };
  for (Operation &op : body.without_terminator()) {
    if (llvm::none_of(op.getOperands(), depends))
      continue;
    if (!preservesAffinity(&op, depends))
      return false;
    dependsOnX.insert(op.getResult(0));
  }
  return depends(llvm::cast<neuron::YieldOp>(body.getTerminator()).getH());
}

/// Whether `value` (in a derivative block) is computed from any of the
/// block's arguments numbered in `args`.
bool readsArgument(Value value, ArrayRef<unsigned> args) {
  SmallVector<Value> worklist{value};
  llvm::DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (llvm::is_contained(args, arg.getArgNumber()))
        return true;
      continue;
    }
    llvm::append_range(worklist, v.getDefiningOp()->getOperands());
  }
  return false;
}

/// One step of x's path to h: `op` takes the path's value as operand
/// number `operand`.
struct PathStep {
  Operation *op;
  unsigned operand;
};

/// x's path to h, from x up, when each value on it (x included) has one
/// use and each step can be undone: adds, subtractions, negations, products
/// with a factor free of v, quotients by anything free of x and fmas (as
/// products and adds). A factor that reads v is refused: v starts at zero.
std::optional<SmallVector<PathStep>> undoablePathToOutput(Block &body) {
  SmallVector<PathStep> path;
  Value value = body.getArgument(1);
  while (value.hasOneUse()) {
    OpOperand &use = *value.use_begin();
    Operation *op = use.getOwner();
    unsigned i = use.getOperandNumber();
    if (isa<neuron::YieldOp>(op))
      return path;
    auto factorFreeOfV = [&](unsigned j) { return !readsArgument(op->getOperand(j), {0}); };
    bool undoable = llvm::TypeSwitch<Operation *, bool>(op)
                        .Case<arith::AddFOp, arith::SubFOp, arith::NegFOp>([](auto) { return true; })
                        .Case<arith::MulFOp>([&](auto) { return factorFreeOfV(1 - i); })
                        .Case<arith::DivFOp>([&](auto) { return i == 0; })
                        .Case<math::FmaOp>([&](auto) { return i == 2 || factorFreeOfV(1 - i); })
                        .Default([](Operation *) { return false; });
    if (!undoable)
      return std::nullopt;
    path.push_back({op, i});
    value = op->getResult(0);
  }
  return std::nullopt;
}

/// Operand `i` of `op`, a step of x's path checked by undoablePathToOutput,
/// from the value `r` of its result.
Value undoStep(OpBuilder &b, Location loc, Operation *op, unsigned i, Value r) {
  auto other = [&](unsigned j) { return op->getOperand(j); };
  auto overFactor = [&](Value numerator, Value factor) -> Value {
    Value one =
        arith::ConstantOp::create(b, loc, r.getType(), b.getFloatAttr(r.getType(), 1.0));
    return arith::MulFOp::create(b, loc, numerator, arith::DivFOp::create(b, loc, one, factor));
  };
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case<arith::AddFOp>([&](auto) { return arith::SubFOp::create(b, loc, r, other(1 - i)); })
      .Case<arith::SubFOp>([&](auto) -> Value {
        if (i == 0)
          return arith::AddFOp::create(b, loc, r, other(1));
        return arith::SubFOp::create(b, loc, other(0), r);
      })
      .Case<arith::NegFOp>([&](auto) { return arith::NegFOp::create(b, loc, r); })
      .Case<arith::MulFOp>([&](auto) { return overFactor(r, other(1 - i)); })
      .Case<arith::DivFOp>([&](auto) { return arith::MulFOp::create(b, loc, r, other(1)); })
      .Case<math::FmaOp>([&](auto) -> Value {
        if (i == 2)
          return arith::SubFOp::create(b, loc, r,
                                       arith::MulFOp::create(b, loc, other(0), other(1)));
        return overFactor(arith::SubFOp::create(b, loc, r, other(2)), other(1 - i));
      });
}

} // namespace

namespace {

/// Clones `body` into `result.block` (arguments first), carrying the
/// tangents of every argument along (forward mode); the clone of h, or
/// failure on an op that cannot be differentiated.
FailureOr<Value> cloneWithTangents(Block &body, OpBuilder &b, Location loc,
                                   ChargeDerivatives &result, IRMapping &mapping,
                                   SmallVector<Tangents> &dirs) {
  Block *block = result.block.get();
  Differentiator diff(b, loc);
  unsigned numArgs = body.getNumArguments();
  Type type = body.getArgument(0).getType();
  Value one = arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, 1.0));
  for (unsigned i = 0; i < numArgs; ++i)
    dirs[i][block->getArgument(i)] = one;
  mapping.map(body.getArguments(), block->getArguments());
  for (Operation &op : body.without_terminator()) {
    if (op.getNumRegions() != 0 || op.getNumResults() != 1)
      return op.emitOpError("cannot be differentiated in a neuron's charge function "
                            "(it must be a single-result op without regions)");
    Operation *clone = b.clone(op, mapping);
    SmallVector<Value> operands(clone->getOperands());
    if (failed(diff.tangentOf(&op, operands, clone->getResult(0), dirs)))
      return failure();
  }
  return mapping.lookup(llvm::cast<neuron::YieldOp>(body.getTerminator()).getH());
}

/// Values on x's path to h from h (a new, last argument), undoing the
/// steps top down; the derivatives then read them instead of x. Nothing
/// when the path cannot be undone.
void readFromOutput(Block &body, OpBuilder &b, Location loc, Value h, const IRMapping &mapping,
                    ChargeDerivatives &result) {
  std::optional<SmallVector<PathStep>> path = undoablePathToOutput(body);
  if (!path)
    return;
  Block *block = result.block.get();
  Value hArg = block->addArgument(body.getArgument(0).getType(), loc);
  SmallVector<std::pair<Value, Value>> fromH{{h, hArg}};
  Value r = hArg;
  for (const PathStep &step : llvm::reverse(*path)) {
    Operation *clone = mapping.lookup(step.op->getResult(0)).getDefiningOp();
    r = undoStep(b, loc, clone, step.operand, r);
    fromH.push_back({clone->getOperand(step.operand), r});
  }
  for (auto [value, recovered] : fromH)
    value.replaceAllUsesWith(recovered);
  // The recovered values were built last; their users come before them.
  sortTopologically(block);
  result.takesOutput = true;
}

/// Removes what the derivatives do not use, then records which arguments
/// remain in use.
void pruneToDerivatives(ChargeDerivatives &result) {
  Block *block = result.block.get();
  pruneTo(*block, result.derivatives);
  for (BlockArgument a : block->getArguments())
    result.uses.push_back(!a.use_empty());
}

/// Factors of the parameters' derivatives that read only parameters
/// (PLIF's dsigmoid/dw and the 1 / d of x - v), peeled off the top.
void peelParameterFactors(OpBuilder &b, Location loc, unsigned numArgs,
                          ChargeDerivatives &result) {
  SmallVector<unsigned> stepArgs{0, 1};
  if (result.takesOutput)
    stepArgs.push_back(numArgs);
  auto perStep = [&](Value v) { return readsArgument(v, stepArgs); };
  result.factors.assign(numArgs, Value());
  for (unsigned i = 2; i < numArgs; ++i) {
    Value &d = result.derivatives[i];
    while (auto m = d.getDefiningOp<arith::MulFOp>()) {
      Value lhs = m.getLhs(), rhs = m.getRhs();
      bool lhsPerStep = perStep(lhs);
      if (lhsPerStep == perStep(rhs))
        break;
      Value factor = lhsPerStep ? rhs : lhs;
      d = lhsPerStep ? lhs : rhs;
      Value &product = result.factors[i];
      product = product ? arith::MulFOp::create(b, loc, product, factor).getResult() : factor;
    }
  }
}

} // namespace

void nerve::pruneTo(Block &block, ArrayRef<Value> live) {
  llvm::SmallPtrSet<Operation *, 16> needed;
  SmallVector<Operation *> worklist;
  for (Value v : live)
    if (Operation *def = v ? v.getDefiningOp() : nullptr)
      worklist.push_back(def);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!needed.insert(op).second)
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
  }
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
    if (!needed.contains(&op))
      op.erase();
}

FailureOr<ChargeDerivatives> nerve::differentiateCharge(Region &charge, bool throughOutput) {
  Block &body = charge.front();
  Location loc = charge.getParentOp()->getLoc();
  ChargeDerivatives result;
  result.block = std::make_unique<Block>();
  for (BlockArgument a : body.getArguments())
    result.block->addArgument(a.getType(), a.getLoc());

  // The block is detached, so the builder takes its context from the region.
  OpBuilder b(charge.getContext());
  b.setInsertionPointToEnd(result.block.get());
  unsigned numArgs = body.getNumArguments();
  SmallVector<Tangents> dirs(numArgs);
  IRMapping mapping;
  FailureOr<Value> h = cloneWithTangents(body, b, loc, result, mapping, dirs);
  if (failed(h))
    return failure();
  if (throughOutput)
    readFromOutput(body, b, loc, *h, mapping, result);
  Type type = body.getArgument(0).getType();
  Value zero = arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, 0.0));
  for (unsigned i = 0; i < numArgs; ++i) {
    Value d = dirs[i].lookup(*h);
    result.derivatives.push_back(d ? d : zero);
  }
  pruneToDerivatives(result);
  peelParameterFactors(b, loc, numArgs, result);
  result.affineInInput = isAffineInInput(body) && !readsArgument(result.derivatives[1], {0, 1});
  return result;
}
