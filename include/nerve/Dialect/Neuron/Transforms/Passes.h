//===- Passes.h - neuron transformations -------------------------*- C++ -*-===//

#ifndef NERVE_DIALECT_NEURON_TRANSFORMS_PASSES_H
#define NERVE_DIALECT_NEURON_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace nerve::neuron {

#define GEN_PASS_DECL
#include "nerve/Dialect/Neuron/Transforms/Passes.h.inc"

/// Patterns rewriting IF, LIF, PLIF (forward and backward) into the generic
/// form.
void populateGeneralizationPatterns(mlir::RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "nerve/Dialect/Neuron/Transforms/Passes.h.inc"

} // namespace nerve::neuron

#endif // NERVE_DIALECT_NEURON_TRANSFORMS_PASSES_H
