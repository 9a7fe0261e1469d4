//===- NeuronToTdim.h - generic neurons to tdim loops ------------*- C++ -*-===//

#ifndef NERVE_CONVERSION_NEURONTOTDIM_NEURONTOTDIM_H
#define NERVE_CONVERSION_NEURONTOTDIM_NEURONTOTDIM_H

#include "nerve/Dialect/Neuron/IR/NeuronAttrs.h"

#include "mlir/IR/Builders.h"
#include "mlir/Support/LLVM.h"

#include <memory>

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace nerve {

/// g'(u) of `surrogate` at `u` (a float of the compute type).
mlir::Value buildSurrogateDerivative(mlir::OpBuilder &b, mlir::Location loc,
                                     neuron::SurrogateAttr surrogate, mlir::Value u);

/// The derivatives of a charge function, built by forward-mode
/// differentiation of its region.
struct ChargeDerivatives {
  /// A detached block taking the charge region's arguments (v, x,
  /// params...) and computing the derivatives; unused ops removed.
  std::unique_ptr<mlir::Block> block;
  /// d h / d argument, for each argument of the region, in order.
  llvm::SmallVector<mlir::Value> derivatives;
  /// Whether the derivatives read the argument (v, x, params...).
  llvm::SmallVector<bool> uses;
  /// Whether h = A(v, params) + beta(params) * x: x enters only through
  /// sums, products with and quotients by values free of x, and selects on
  /// conditions free of x, and the slope beta does not depend on v (which
  /// starts at zero). Backward can then recover x from h as (h - A) / beta
  /// instead of reading it.
  bool affineInInput = false;
};

/// Differentiates the single-block `charge` region with respect to every
/// argument. Fails, with a diagnostic naming it, on an operation it cannot
/// differentiate.
mlir::FailureOr<ChargeDerivatives> differentiateCharge(mlir::Region &charge);

/// Patterns lowering neuron.generic and neuron.generic_grad to tdim loops.
void populateNeuronToTdimPatterns(mlir::RewritePatternSet &patterns);

} // namespace nerve

#endif // NERVE_CONVERSION_NEURONTOTDIM_NEURONTOTDIM_H
