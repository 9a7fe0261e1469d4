//===- NeuronPasses.td - neuron transformations ------------*- tablegen -*-===//

#ifndef NERVE_DIALECTS_NEURON_PASSES
#define NERVE_DIALECTS_NEURON_PASSES

include "mlir/Pass/PassBase.td"

def NeuronGeneralize : Pass<"neuron-generalize"> {
  let summary = "Rewrites IF, LIF and PLIF into neuron.generic with their charge functions";
  let description = [{
    Each named neuron op becomes a `neuron.generic` (or `neuron.generic_grad`)
    whose `charge` region spells the neuron's charge function as
    SpikingJelly's torch reference computes it: IF `v + x`; LIF
    `v + (x - (v - v_reset)) / tau`; PLIF `v + (x - (v - v_reset)) * sigmoid(w)`
    (and the forms without `decay_input`).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
}

#endif // NERVE_DIALECTS_NEURON_PASSES
