//===- NeuronDialect.cpp - the spiking-neuron dialect -----------------------===//

#include "nerve/Dialect/Neuron/IR/NeuronDialect.h"

using namespace nerve::neuron;

#include "dialects/neuron/NeuronDialect.cpp.inc"

void NeuronDialect::initialize() {}
