//===- Surrogates.cpp - surrogate gradient functions --------------------===//
//
// g'(u) of each surrogate, as SpikingJelly's torch reference computes it
// (its CuPy kernels differ for piecewise_leaky_relu; see docs/neuron.md).
// Branches are selects, so a value the formula does not pick (beta / 0 at
// u = -1 in s2nn, 1 / 0 at u = 0 in log_tailed_relu) never leaks a NaN.
//
//===----------------------------------------------------------------------===//

#include "FloatArith.h"
#include "nerve/Conversion/NeuronToTdim/NeuronToTdim.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace nerve;
using namespace nerve::neuron;

namespace {
/// FloatArith and the one compound the surrogates share.
struct Arith : FloatArith {
  /// alpha * s * (1 - s) with s = sigmoid(alpha * u), written as
  /// alpha * t / (1 + t)^2 with t = exp(-|alpha * u|) <= 1: the same value
  /// (s(1 - s) is even in u), a divisor in [1, 2] where 1 + exp(-alpha u)
  /// overflows for a potential far below the threshold (which sent IF's
  /// backward, whose potential drifts without leak, through the division's
  /// slow path), and no cancellation in 1 - s where s rounds to 1.
  /// -|alpha| * |u| is -|alpha * u| exactly (rounding is symmetric), in one
  /// operation fewer.
  Value sigmoidGrad(double alpha, Value u) {
    Value t = exp(mul(c(-std::abs(alpha)), abs(u)));
    Value r = div(c(1.0), add(c(1.0), t));
    return mul(mul(c(alpha), t), mul(r, r));
  }
};
} // namespace

Value nerve::buildSurrogateDerivative(OpBuilder &b, Location loc, SurrogateAttr surrogate,
                                      Value u) {
  Arith a{{b, loc, llvm::cast<FloatType>(u.getType())}};
  auto p = [&](StringRef name) { return surrogate.getParam(name); };
  using P = arith::CmpFPredicate;
  switch (surrogate.getKind()) {
  case SurrogateKind::sigmoid:
    return a.sigmoidGrad(p("alpha"), u);
  case SurrogateKind::atan: {
    Value q = a.mul(a.c(M_PI / 2 * p("alpha")), u);
    return a.div(a.c(p("alpha") / 2), a.add(a.c(1.0), a.mul(q, q)));
  }
  case SurrogateKind::piecewise_leaky_relu: {
    double w = p("w");
    Value inside = a.cmp(P::OLT, a.abs(u), a.c(w));
    return a.select(inside, a.c(1.0 / (2 * w)), a.c(p("c")));
  }
  case SurrogateKind::s2nn: {
    Value negative = a.cmp(P::OLT, u, a.c(0.0));
    Value right = a.div(a.c(p("beta")), a.add(u, a.c(1.0)));
    return a.select(negative, a.sigmoidGrad(p("alpha"), u), right);
  }
  case SurrogateKind::q_pseudo_spike: {
    double alpha = p("alpha");
    Value base = a.add(a.c(1.0), a.mul(a.c(2.0 / (alpha - 1.0)), a.abs(u)));
    return math::PowFOp::create(b, loc, base, a.c(-alpha));
  }
  case SurrogateKind::leaky_k_relu:
    return a.select(a.cmp(P::OGE, u, a.c(0.0)), a.c(p("k")), a.c(p("leak")));
  case SurrogateKind::fake_numerical_gradient: {
    // torch: clamp_max(((u >= 0) * 2 - 1) / u, alpha).
    Value sign = a.select(a.cmp(P::OGE, u, a.c(0.0)), a.c(1.0), a.c(-1.0));
    return a.min(a.div(sign, u), a.c(p("alpha")));
  }
  case SurrogateKind::log_tailed_relu: {
    Value middle = a.select(a.cmp(P::OLE, u, a.c(0.0)), a.c(p("alpha")), a.c(1.0));
    return a.select(a.cmp(P::OGT, u, a.c(1.0)), a.div(a.c(1.0), u), middle);
  }
  case SurrogateKind::piecewise_quadratic: {
    double alpha = p("alpha");
    Value outside = a.cmp(P::OGT, a.abs(u), a.c(1.0 / alpha));
    Value inner = a.add(a.mul(a.c(-alpha * alpha), a.abs(u)), a.c(alpha));
    return a.select(outside, a.c(0.0), inner);
  }
  case SurrogateKind::piecewise_exp: {
    double alpha = p("alpha");
    return a.mul(a.c(alpha / 2), a.exp(a.mul(a.c(-alpha), a.abs(u))));
  }
  case SurrogateKind::soft_sign: {
    double alpha = p("alpha");
    Value d = a.add(a.c(1.0 / alpha), a.abs(u));
    return a.div(a.c(1.0), a.mul(a.c(2 * alpha), a.mul(d, d)));
  }
  case SurrogateKind::super_spike: {
    Value d = a.add(a.abs(u), a.c(1.0));
    return a.div(a.c(p("alpha")), a.mul(d, d));
  }
  case SurrogateKind::erf: {
    double alpha = p("alpha");
    Value au = a.mul(a.c(alpha), u);
    return a.mul(a.c(alpha / std::sqrt(M_PI)), a.exp(a.sub(a.c(0.0), a.mul(au, au))));
  }
  }
  return {};
}
