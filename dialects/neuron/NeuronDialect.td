//===- NeuronDialect.td - the spiking-neuron dialect -------*- tablegen -*-===//

#ifndef NERVE_DIALECTS_NEURON_DIALECT
#define NERVE_DIALECTS_NEURON_DIALECT

include "mlir/IR/OpBase.td"

def Neuron_Dialect : Dialect {
  let name = "neuron";
  let cppNamespace = "::nerve::neuron";
  let summary = "Multi-step spiking neurons: forward and surrogate-gradient backward";
  let description = [{
    Integrate-and-fire style neurons (IF, LIF, PLIF) run over a `tdim` tensor
    whose time axis is named. A neuron is a charge function plus fire and
    reset; every neuron op lowers through one generic form.
  }];
  let dependentDialects = ["::nerve::tdim::TdimDialect"];
}

#endif // NERVE_DIALECTS_NEURON_DIALECT
