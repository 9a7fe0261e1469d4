//===- NeuronDialect.td - the spiking-neuron dialect -------*- tablegen -*-===//

#ifndef NERVE_DIALECTS_NEURON_DIALECT
#define NERVE_DIALECTS_NEURON_DIALECT

include "mlir/IR/OpBase.td"

def Neuron_Dialect : Dialect {
  let name = "neuron";
  let cppNamespace = "::nerve::neuron";
  let summary = "Multi-step spiking neurons: forward and surrogate-gradient backward";
  let description = [{
    Integrate-and-fire neurons (IF, LIF, PLIF) run over a `tdim` tensor
    whose time axis is named, in any layout. A neuron is a *charge function*
    `h = f(v_prev, x, params)` followed by fire (`s = h >= v_threshold`) and
    reset (hard: `v = s ? v_reset : h`; soft: `v = h - s * v_threshold`).

    The named ops (`neuron.lif`, ...) become `neuron.generic`, whose charge
    function is a region; one lowering turns every generic neuron into tdim
    loops, and the backward recurrence is derived from the charge region by
    differentiation, so a new neuron model needs no new backward code.

    Any other neuron is written once as a `neuron.model` (states,
    parameters, one charge region for all states, a threshold, per-state
    resets) and run by `neuron.forward` / `neuron.backward`, whose backward
    through every state, the threshold and the parameters is derived by
    reverse-mode differentiation of the model's regions.

    The math follows SpikingJelly's torch reference (its CuPy kernels differ
    in places; see docs/neuron.md).
  }];
  let dependentDialects = ["::nerve::tdim::TdimDialect", "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class Neuron_Op<string mnemonic, list<Trait> traits = []>
    : Op<Neuron_Dialect, mnemonic, traits>;

#endif // NERVE_DIALECTS_NEURON_DIALECT
