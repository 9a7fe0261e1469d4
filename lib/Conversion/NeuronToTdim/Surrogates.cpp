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
    // Operands are built in named statements, one op each, so the ops'
    // order does not depend on how the host compiler orders arguments.
    Value minusAlpha = c(-std::abs(alpha));
    Value t = exp(mul(minusAlpha, abs(u)));
    Value one = c(1.0);
    Value r = div(one, add(c(1.0), t));
    Value at = mul(c(alpha), t);
    return mul(at, mul(r, r));
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
    Value half = a.c(p("alpha") / 2);
    Value one = a.c(1.0);
    return a.div(half, a.add(one, a.mul(q, q)));
  }
  case SurrogateKind::piecewise_leaky_relu: {
    double w = p("w");
    Value magnitude = a.abs(u);
    Value inside = a.cmp(P::OLT, magnitude, a.c(w));
    Value in = a.c(1.0 / (2 * w));
    Value out = a.c(p("c"));
    return a.select(inside, in, out);
  }
  case SurrogateKind::s2nn: {
    Value negative = a.cmp(P::OLT, u, a.c(0.0));
    Value beta = a.c(p("beta"));
    Value right = a.div(beta, a.add(u, a.c(1.0)));
    return a.select(negative, a.sigmoidGrad(p("alpha"), u), right);
  }
  case SurrogateKind::q_pseudo_spike: {
    double alpha = p("alpha");
    Value one = a.c(1.0);
    Value scale = a.c(2.0 / (alpha - 1.0));
    Value base = a.add(one, a.mul(scale, a.abs(u)));
    return math::PowFOp::create(b, loc, base, a.c(-alpha));
  }
  case SurrogateKind::leaky_k_relu: {
    Value positive = a.cmp(P::OGE, u, a.c(0.0));
    Value k = a.c(p("k"));
    Value leak = a.c(p("leak"));
    return a.select(positive, k, leak);
  }
  case SurrogateKind::fake_numerical_gradient: {
    // torch: clamp_max(((u >= 0) * 2 - 1) / u, alpha).
    Value positive = a.cmp(P::OGE, u, a.c(0.0));
    Value one = a.c(1.0);
    Value minusOne = a.c(-1.0);
    Value sign = a.select(positive, one, minusOne);
    Value slope = a.div(sign, u);
    return a.min(slope, a.c(p("alpha")));
  }
  case SurrogateKind::log_tailed_relu: {
    Value negative = a.cmp(P::OLE, u, a.c(0.0));
    Value alpha = a.c(p("alpha"));
    Value one = a.c(1.0);
    Value middle = a.select(negative, alpha, one);
    Value above = a.cmp(P::OGT, u, a.c(1.0));
    Value tail = a.div(a.c(1.0), u);
    return a.select(above, tail, middle);
  }
  case SurrogateKind::piecewise_quadratic: {
    double alpha = p("alpha");
    Value magnitude = a.abs(u);
    Value outside = a.cmp(P::OGT, magnitude, a.c(1.0 / alpha));
    Value slope = a.c(-alpha * alpha);
    Value falling = a.mul(slope, a.abs(u));
    Value inner = a.add(falling, a.c(alpha));
    Value zero = a.c(0.0);
    return a.select(outside, zero, inner);
  }
  case SurrogateKind::piecewise_exp: {
    double alpha = p("alpha");
    Value half = a.c(alpha / 2);
    Value minusAlpha = a.c(-alpha);
    return a.mul(half, a.exp(a.mul(minusAlpha, a.abs(u))));
  }
  case SurrogateKind::soft_sign: {
    double alpha = p("alpha");
    Value inverse = a.c(1.0 / alpha);
    Value d = a.add(inverse, a.abs(u));
    Value one = a.c(1.0);
    Value twoAlpha = a.c(2 * alpha);
    return a.div(one, a.mul(twoAlpha, a.mul(d, d)));
  }
  case SurrogateKind::super_spike: {
    Value magnitude = a.abs(u);
    Value d = a.add(magnitude, a.c(1.0));
    Value alpha = a.c(p("alpha"));
    return a.div(alpha, a.mul(d, d));
  }
  case SurrogateKind::erf: {
    double alpha = p("alpha");
    Value au = a.mul(a.c(alpha), u);
    Value scale = a.c(alpha / std::sqrt(M_PI));
    Value zero = a.c(0.0);
    return a.mul(scale, a.exp(a.sub(zero, a.mul(au, au))));
  }
  }
  return {};
}
