//===- NeuronAttrs.h - surrogate gradients -----------------------*- C++ -*-===//

#ifndef NERVE_DIALECT_NEURON_IR_NEURONATTRS_H
#define NERVE_DIALECT_NEURON_IR_NEURONATTRS_H

#include "nerve/Dialect/Neuron/IR/NeuronDialect.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"

#include "nerve/Dialect/Neuron/IR/NeuronEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "nerve/Dialect/Neuron/IR/NeuronAttrs.h.inc"

namespace nerve::neuron {

/// A parameter a surrogate takes and its SpikingJelly default.
struct SurrogateParam {
  const char *name;
  double defaultValue;
  /// The smallest value allowed (exclusive), or NaN for any finite value.
  double lowerBound;
};

/// A number written as a float or an integer literal (`1.5`, `-2`, `1`).
mlir::ParseResult parseNumber(mlir::AsmParser &parser, double &value);

/// The parameters `kind` takes, in order.
llvm::ArrayRef<SurrogateParam> getSurrogateParams(SurrogateKind kind);

} // namespace nerve::neuron

#endif // NERVE_DIALECT_NEURON_IR_NEURONATTRS_H
