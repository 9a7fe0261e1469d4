//===- NeuronOps.cpp - neuron operation verifiers -----------------------===//
//
// Every misuse is reported in the user's terms: which operand, which
// dimension, which attribute, what was expected.
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/Neuron/IR/NeuronOps.h"
#include "NeuronChecker.h"

#include "nerve/Dialect/Tdim/IR/TdimVerifyUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace nerve;
using namespace nerve::neuron;
using tdim::DimAttr;
using tdim::TdimTensorType;
using checks::NeuronChecker;
using checks::num;



static std::optional<double> optionalValue(std::optional<APFloat> f) {
  if (!f)
    return std::nullopt;
  return f->convertToDouble();
}

static LogicalResult verifyTau(Operation *op, double tau) {
  if (!std::isfinite(tau) || !(tau > 1.0))
    return op->emitOpError() << "tau = " << num(tau)
                             << " is not allowed; LIF needs a finite tau > 1 (as "
                                "SpikingJelly does): 1/tau is the fraction of the gap to "
                                "v_reset closed per step";
  return success();
}

template <typename OpTy>
static LogicalResult verifyForwardCommon(OpTy op, NeuronChecker &c) {
  if (failed(c.reference(op.getX(), "x")) || failed(c.perNeuron(op.getVInit(), "v_init")) ||
      failed(c.sequence(op.getSpike(), "spike", /*allowInt=*/true)) ||
      failed(c.sequence(op.getVSeq(), "v_seq")) ||
      failed(c.sequence(op.getHSeq(), "h_seq")) ||
      failed(c.perNeuron(op.getVLast(), "v_last")))
    return failure();
  if (failed(c.finite("v_threshold", op.getVThreshold().convertToDouble())) ||
      failed(c.finite("v_reset", optionalValue(op.getVReset()))))
    return failure();
  return success();
}

LogicalResult IFOp::verify() {
  NeuronChecker c(*this, getTime());
  if (failed(verifyForwardCommon(*this, c)))
    return failure();
  return c.sizes();
}

LogicalResult LIFOp::verify() {
  NeuronChecker c(*this, getTime());
  if (failed(verifyForwardCommon(*this, c)) ||
      failed(verifyTau(*this, getTau().convertToDouble())))
    return failure();
  return c.sizes();
}

LogicalResult PLIFOp::verify() {
  NeuronChecker c(*this, getTime());
  if (failed(verifyForwardCommon(*this, c)) || failed(c.scalar(getW(), "w")))
    return failure();
  return c.sizes();
}

/// The forward op of kind `FwdOp` that writes `hSeq` as its h_seq, if any.
template <typename FwdOp>
static FwdOp findForward(Value hSeq) {
  for (Operation *user : hSeq.getUsers())
    if (auto fwd = llvm::dyn_cast<FwdOp>(user); fwd && fwd.getHSeq() == hSeq)
      return fwd;
  return {};
}

/// Backward attributes must be those of the forward op that wrote h_seq.
template <typename GradOp, typename FwdOp>
static LogicalResult verifyMatchesForward(GradOp op, FwdOp fwd) {
  if (!fwd)
    return success();
  auto mismatch = [&](StringRef name, std::string forward, std::string backward) {
    InFlightDiagnostic d = op.emitOpError();
    d << "`" << name << "` is " << backward << " but the " << fwd->getName()
      << " that wrote `h_seq` has " << forward;
    d.attachNote(fwd.getLoc()) << "the forward op is here";
    return d;
  };
  if (fwd.getTime() != op.getTime())
    return mismatch("time", fwd.getTime().str(), op.getTime().str());
  if (fwd.getVThreshold() != op.getVThreshold())
    return mismatch("v_threshold", num(fwd.getVThreshold().convertToDouble()),
                    num(op.getVThreshold().convertToDouble()));
  auto resetText = [](std::optional<APFloat> r) {
    return r ? num(r->convertToDouble()) : std::string("soft reset");
  };
  if (optionalValue(fwd.getVReset()) != optionalValue(op.getVReset()))
    return mismatch("v_reset", resetText(fwd.getVReset()), resetText(op.getVReset()));
  if constexpr (std::is_same_v<FwdOp, LIFOp>)
    if (fwd.getTau() != op.getTau())
      return mismatch("tau", num(fwd.getTau().convertToDouble()),
                      num(op.getTau().convertToDouble()));
  if constexpr (!std::is_same_v<FwdOp, IFOp>)
    if (fwd.getDecayInput() != op.getDecayInput())
      return mismatch("decay_input", fwd.getDecayInput() ? "true" : "false",
                      op.getDecayInput() ? "true" : "false");
  return success();
}

template <typename OpTy>
static LogicalResult verifyBackwardCommon(OpTy op, NeuronChecker &c) {
  if (failed(c.reference(op.getHSeq(), "h_seq")) ||
      failed(c.sequence(op.getGradSpike(), "grad_spike")) ||
      failed(c.sequence(op.getGradVSeq(), "grad_v_seq")) ||
      failed(c.perNeuron(op.getGradVLast(), "grad_v_last")) ||
      failed(c.sequence(op.getGradX(), "grad_x")) ||
      failed(c.perNeuron(op.getGradVInit(), "grad_v_init")))
    return failure();
  if (failed(c.finite("v_threshold", op.getVThreshold().convertToDouble())) ||
      failed(c.finite("v_reset", optionalValue(op.getVReset()))))
    return failure();
  return success();
}

LogicalResult IFGradOp::verify() {
  NeuronChecker c(*this, getTime());
  if (failed(verifyBackwardCommon(*this, c)) || failed(c.sizes()))
    return failure();
  return verifyMatchesForward(*this, findForward<IFOp>(getHSeq()));
}

LogicalResult LIFGradOp::verify() {
  NeuronChecker c(*this, getTime());
  if (failed(verifyBackwardCommon(*this, c)) ||
      failed(verifyTau(*this, getTau().convertToDouble())) || failed(c.sizes()))
    return failure();
  return verifyMatchesForward(*this, findForward<LIFOp>(getHSeq()));
}

LogicalResult PLIFGradOp::verify() {
  NeuronChecker c(*this, getTime());
  if (failed(verifyBackwardCommon(*this, c)) || failed(c.sequence(getX(), "x")) ||
      failed(c.perNeuron(getVInit(), "v_init")) || failed(c.scalar(getW(), "w")) ||
      failed(c.scalar(getGradW(), "grad_w")) || failed(c.sizes()))
    return failure();
  return verifyMatchesForward(*this, findForward<PLIFOp>(getHSeq()));
}

/// The charge region takes (v, x, params...) in one float type and yields h.
static LogicalResult verifyCharge(Operation *op, Region &charge, unsigned numParams) {
  Block &b = charge.front();
  if (b.getNumArguments() != 2 + numParams)
    return op->emitOpError() << "charge region takes " << b.getNumArguments()
                             << " arguments; expected the previous potential, the input "
                                "and "
                             << numParams << " parameters";
  Type t = b.getArgument(0).getType();
  if (!llvm::isa<FloatType>(t))
    return op->emitOpError() << "charge region computes in " << t << "; expected a float type";
  for (BlockArgument a : b.getArguments())
    if (a.getType() != t)
      return op->emitOpError() << "charge region arguments must all have type " << t
                               << "; argument #" << a.getArgNumber() << " has "
                               << a.getType();
  auto yield = llvm::dyn_cast<YieldOp>(b.getTerminator());
  if (!yield || yield.getValues().size() != 1 || yield.getH().getType() != t)
    return op->emitOpError() << "charge region must yield the new potential as " << t;
  return success();
}

LogicalResult GenericOp::verify() {
  NeuronChecker c(*this, getTime());
  if (failed(verifyForwardCommon(*this, c)))
    return failure();
  for (Value p : getParams())
    if (failed(c.scalar(p, "params")))
      return failure();
  return c.sizes();
}

LogicalResult GenericOp::verifyRegions() {
  return verifyCharge(*this, getCharge(), getParams().size());
}

LogicalResult GenericGradOp::verify() {
  NeuronChecker c(*this, getTime());
  if (failed(verifyBackwardCommon(*this, c)) || failed(c.sequence(getX(), "x")) ||
      failed(c.perNeuron(getVInit(), "v_init")))
    return failure();
  for (Value p : getParams())
    if (failed(c.scalar(p, "params")))
      return failure();
  for (Value p : getGradParams())
    if (failed(c.scalar(p, "grad_params")))
      return failure();
  if (!getGradParams().empty() && getGradParams().size() != getParams().size())
    return emitOpError() << "has " << getParams().size() << " parameters but "
                         << getGradParams().size() << " parameter gradients";
  return c.sizes();
}

LogicalResult GenericGradOp::verifyRegions() {
  return verifyCharge(*this, getCharge(), getParams().size());
}

#define GET_OP_CLASSES
#include "nerve/Dialect/Neuron/IR/NeuronOps.cpp.inc"
