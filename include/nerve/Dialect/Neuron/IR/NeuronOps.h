//===- NeuronOps.h - neuron operations ---------------------------*- C++ -*-===//

#ifndef NERVE_DIALECT_NEURON_IR_NEURONOPS_H
#define NERVE_DIALECT_NEURON_IR_NEURONOPS_H

#include "nerve/Dialect/Neuron/IR/NeuronAttrs.h"
#include "nerve/Dialect/Neuron/IR/NeuronDialect.h"
#include "nerve/Dialect/Tdim/IR/TdimOps.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "nerve/Dialect/Neuron/IR/NeuronOps.h.inc"

namespace nerve::neuron {

/// Whether nerve can differentiate `op` inside a neuron model's regions.
bool isDifferentiable(mlir::Operation *op);

} // namespace nerve::neuron

#endif // NERVE_DIALECT_NEURON_IR_NEURONOPS_H
