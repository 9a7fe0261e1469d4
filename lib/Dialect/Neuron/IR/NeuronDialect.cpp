//===- NeuronDialect.cpp - the spiking-neuron dialect -------------------===//

#include "nerve/Dialect/Neuron/IR/NeuronDialect.h"

#include "nerve/Dialect/Neuron/IR/NeuronOps.h"

using namespace mlir;
using namespace nerve::neuron;

#include "nerve/Dialect/Neuron/IR/NeuronDialect.cpp.inc"

void NeuronDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "nerve/Dialect/Neuron/IR/NeuronOps.cpp.inc"
      >();
}
