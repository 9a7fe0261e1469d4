//===- NeuronDialect.h - the spiking-neuron dialect --------------*- C++ -*-===//

#ifndef NERVE_DIALECT_NEURON_IR_NEURONDIALECT_H
#define NERVE_DIALECT_NEURON_IR_NEURONDIALECT_H

#include "mlir/IR/Dialect.h"
#include "nerve/Dialect/Tdim/IR/TdimDialect.h"

#include "dialects/neuron/NeuronDialect.h.inc"

#endif // NERVE_DIALECT_NEURON_IR_NEURONDIALECT_H
