//===- NeuronDialect.h - the spiking-neuron dialect --------------*- C++ -*-===//

#ifndef NERVE_DIALECT_NEURON_IR_NEURONDIALECT_H
#define NERVE_DIALECT_NEURON_IR_NEURONDIALECT_H

#include "nerve/Dialect/Tdim/IR/TdimDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Dialect.h"

#include "nerve/Dialect/Neuron/IR/NeuronDialect.h.inc"

#endif // NERVE_DIALECT_NEURON_IR_NEURONDIALECT_H
