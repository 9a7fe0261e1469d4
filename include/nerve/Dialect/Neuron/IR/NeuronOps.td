//===- NeuronOps.td - neuron operations --------------------*- tablegen -*-===//

#ifndef NERVE_DIALECTS_NEURON_OPS
#define NERVE_DIALECTS_NEURON_OPS

include "nerve/Dialect/Neuron/IR/NeuronAttrs.td"
include "nerve/Dialect/Tdim/IR/TdimTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"

def Neuron_Tensor : Type<CPred<"::llvm::isa<::nerve::tdim::TdimTensorType>($_self)">,
                         "tdim tensor", "::nerve::tdim::TdimTensorType">;
def Neuron_Read : Arg<Neuron_Tensor, "", [MemRead]>;
def Neuron_OptRead : Arg<Optional<Neuron_Tensor>, "", [MemRead]>;
def Neuron_Reads : Arg<Variadic<Neuron_Tensor>, "", [MemRead]>;
def Neuron_Write : Arg<Neuron_Tensor, "", [MemWrite]>;
def Neuron_OptWrite : Arg<Optional<Neuron_Tensor>, "", [MemWrite]>;

//===----------------------------------------------------------------------===//
// Forward
//===----------------------------------------------------------------------===//

// The optional outputs after `spike`, in the order the ops list them.
defvar ForwardOutputsFormat = [{
  `outs` `(` $spike `:` qualified(type($spike)) `)`
  (`v_seq` `(` $v_seq^ `:` qualified(type($v_seq)) `)`)?
  (`h_seq` `(` $h_seq^ `:` qualified(type($h_seq)) `)`)?
  (`v_last` `(` $v_last^ `:` qualified(type($v_last)) `)`)?
  `time` custom<Dim>($time) attr-dict
}];

class Neuron_ForwardOp<string mnemonic, string neuronName>
    : Neuron_Op<mnemonic, [AttrSizedOperandSegments]> {
  let summary = "Multi-step " # neuronName # " neurons, forward";
  let hasVerifier = 1;
  code commonDescription = [{
    Runs every neuron (every point of `x`'s dimensions other than `time`)
    through the time steps in order, starting from `v_init` (or `v_reset`
    for hard reset, 0 for soft). Writes the spikes (1 or 0) and, when given,
    the potential after reset (`v_seq`), after charge (`h_seq`, what backward
    needs) and the final potential (`v_last`, without the time dimension).
    `v_reset` present means hard reset, absent soft reset.
  }];
}

def Neuron_IFOp : Neuron_ForwardOp<"if", "integrate-and-fire"> {
  let description = !strconcat([{
    Charge: `h = v + x`.
  }], commonDescription, [{
    ```mlir
    neuron.if ins(%x : !tdim.tensor<[t: ?, n: ?], f32>)
              outs(%s : !tdim.tensor<[t: ?, n: ?], f32>) v_seq(%v : !tdim.tensor<[t: ?, n: ?], f32>)
              time t {v_threshold = 1.0, v_reset = 0.0}
    ```
  }]);
  let arguments = (ins Neuron_Read:$x, Neuron_OptRead:$v_init,
                       Neuron_Write:$spike, Neuron_OptWrite:$v_seq,
                       Neuron_OptWrite:$h_seq, Neuron_OptWrite:$v_last,
                       Tdim_DimAttr:$time,
                       DefaultValuedAttr<F64Attr, "1.0">:$v_threshold,
                       OptionalAttr<F64Attr>:$v_reset);
  let assemblyFormat = !strconcat([{
    `ins` `(` $x `:` qualified(type($x)) `)`
    (`init` `(` $v_init^ `:` qualified(type($v_init)) `)`)?
  }], ForwardOutputsFormat);
}

def Neuron_LIFOp : Neuron_ForwardOp<"lif", "leaky integrate-and-fire"> {
  let description = !strconcat([{
    Charge, as SpikingJelly's torch reference writes it: with `decay_input`,
    `h = v + (x - (v - v_reset)) / tau`; without, `h = v - (v - v_reset) / tau
    + x` (soft reset leaks toward 0: `v_reset` reads as 0 there). nerve
    requires `tau > 1`, as SpikingJelly does: `1 / tau` is the fraction of the
    gap to `v_reset` closed per step.
  }], commonDescription);
  let arguments = (ins Neuron_Read:$x, Neuron_OptRead:$v_init,
                       Neuron_Write:$spike, Neuron_OptWrite:$v_seq,
                       Neuron_OptWrite:$h_seq, Neuron_OptWrite:$v_last,
                       Tdim_DimAttr:$time,
                       DefaultValuedAttr<F64Attr, "2.0">:$tau,
                       DefaultValuedAttr<BoolAttr, "true">:$decay_input,
                       DefaultValuedAttr<F64Attr, "1.0">:$v_threshold,
                       OptionalAttr<F64Attr>:$v_reset);
  let assemblyFormat = !strconcat([{
    `ins` `(` $x `:` qualified(type($x)) `)`
    (`init` `(` $v_init^ `:` qualified(type($v_init)) `)`)?
  }], ForwardOutputsFormat);
}

def Neuron_PLIFOp : Neuron_ForwardOp<"plif", "parametric leaky integrate-and-fire"> {
  let description = !strconcat([{
    LIF whose decay `sigmoid(w)` is learned: `w` is a 0-d tensor read at run
    time, so a training loop changes it without recompiling. With
    `decay_input`, `h = v + (x - (v - v_reset)) * sigmoid(w)`; without,
    `h = v - (v - v_reset) * sigmoid(w) + x`.
  }], commonDescription);
  let arguments = (ins Neuron_Read:$x, Neuron_OptRead:$v_init, Neuron_Read:$w,
                       Neuron_Write:$spike, Neuron_OptWrite:$v_seq,
                       Neuron_OptWrite:$h_seq, Neuron_OptWrite:$v_last,
                       Tdim_DimAttr:$time,
                       DefaultValuedAttr<BoolAttr, "true">:$decay_input,
                       DefaultValuedAttr<F64Attr, "1.0">:$v_threshold,
                       OptionalAttr<F64Attr>:$v_reset);
  let assemblyFormat = !strconcat([{
    `ins` `(` $x `:` qualified(type($x)) `)`
    (`init` `(` $v_init^ `:` qualified(type($v_init)) `)`)?
    `w` `(` $w `:` qualified(type($w)) `)`
  }], ForwardOutputsFormat);
}

//===----------------------------------------------------------------------===//
// Backward
//===----------------------------------------------------------------------===//

defvar BackwardGradsFormat = [{
  (`grad_spike` `(` $grad_spike^ `:` qualified(type($grad_spike)) `)`)?
  (`grad_v_seq` `(` $grad_v_seq^ `:` qualified(type($grad_v_seq)) `)`)?
  (`grad_v_last` `(` $grad_v_last^ `:` qualified(type($grad_v_last)) `)`)?
  `outs` `(` $grad_x `:` qualified(type($grad_x)) `)`
  (`grad_v_init` `(` $grad_v_init^ `:` qualified(type($grad_v_init)) `)`)?
}];

class Neuron_BackwardOp<string mnemonic, string neuronName>
    : Neuron_Op<mnemonic, [AttrSizedOperandSegments]> {
  let summary = "Multi-step " # neuronName # " neurons, backward through time";
  let hasVerifier = 1;
  code commonDescription = [{
    From the saved `h_seq` and the upstream gradients on the spikes, on
    `v_seq` and on `v_last` (the last potential, per neuron; any may be
    left out: zero), computes `grad_x` and, when asked, `grad_v_init`,
    walking time backwards:
    `G_V[t] = grad_v_seq[t] + kappa * G_H[t+1]`, with `grad_v_last` in
    place of `kappa * G_H[T]` at the last step,
    `G_H[t] = grad_spike[t] * psi_t + G_V[t] * a_t`,
    `grad_x[t] = beta * G_H[t]`, `grad_v_init = kappa * G_H[0]`, where
    `psi` is the surrogate's derivative at `h - v_threshold`, `a` the
    derivative of the reset (without its spike path under `detach_reset`),
    and `kappa`, `beta` the charge function's derivatives. The attributes
    must be those of the forward op that wrote `h_seq`.
  }];
}

def Neuron_IFGradOp : Neuron_BackwardOp<"if_grad", "integrate-and-fire"> {
  let description = commonDescription;
  let arguments = (ins Neuron_Read:$h_seq, Neuron_OptRead:$grad_spike,
                       Neuron_OptRead:$grad_v_seq, Neuron_OptRead:$grad_v_last,
                       Neuron_Write:$grad_x, Neuron_OptWrite:$grad_v_init,
                       Tdim_DimAttr:$time,
                       DefaultValuedAttr<F64Attr, "1.0">:$v_threshold,
                       OptionalAttr<F64Attr>:$v_reset, UnitAttr:$detach_reset,
                       Neuron_SurrogateAttr:$surrogate);
  let assemblyFormat = !strconcat([{
    `ins` `(` $h_seq `:` qualified(type($h_seq)) `)`
  }], BackwardGradsFormat, [{ `time` custom<Dim>($time) attr-dict }]);
}

def Neuron_LIFGradOp : Neuron_BackwardOp<"lif_grad", "leaky integrate-and-fire"> {
  let description = commonDescription;
  let arguments = (ins Neuron_Read:$h_seq, Neuron_OptRead:$grad_spike,
                       Neuron_OptRead:$grad_v_seq, Neuron_OptRead:$grad_v_last,
                       Neuron_Write:$grad_x, Neuron_OptWrite:$grad_v_init,
                       Tdim_DimAttr:$time,
                       DefaultValuedAttr<F64Attr, "2.0">:$tau,
                       DefaultValuedAttr<BoolAttr, "true">:$decay_input,
                       DefaultValuedAttr<F64Attr, "1.0">:$v_threshold,
                       OptionalAttr<F64Attr>:$v_reset, UnitAttr:$detach_reset,
                       Neuron_SurrogateAttr:$surrogate);
  let assemblyFormat = !strconcat([{
    `ins` `(` $h_seq `:` qualified(type($h_seq)) `)`
  }], BackwardGradsFormat, [{ `time` custom<Dim>($time) attr-dict }]);
}

def Neuron_PLIFGradOp : Neuron_BackwardOp<"plif_grad", "parametric leaky integrate-and-fire"> {
  let description = !strconcat(commonDescription, [{
    Also writes `grad_w`, the gradient of the loss with respect to `w`
    (0-d), reduced over every neuron and step in a fixed order: the same
    bits on every run. With `decay_input` the derivative with respect to
    `w` is `(x - (v[t-1] - v_reset)) * dd/dw`. Without `x` (the usual form)
    backward computes `x - (v[t-1] - v_reset)` from `h_seq` as
    `(h[t] - v[t-1]) / d`, as SpikingJelly does, and reads one sequence
    fewer; with `x` it reads the input instead. `init` gives `v_init` when
    forward started from one.
  }]);
  let arguments = (ins Neuron_Read:$h_seq, Neuron_OptRead:$x,
                       Neuron_OptRead:$v_init, Neuron_Read:$w,
                       Neuron_OptRead:$grad_spike,
                       Neuron_OptRead:$grad_v_seq, Neuron_OptRead:$grad_v_last,
                       Neuron_Write:$grad_x, Neuron_OptWrite:$grad_v_init,
                       Neuron_Write:$grad_w,
                       Tdim_DimAttr:$time,
                       DefaultValuedAttr<BoolAttr, "true">:$decay_input,
                       DefaultValuedAttr<F64Attr, "1.0">:$v_threshold,
                       OptionalAttr<F64Attr>:$v_reset, UnitAttr:$detach_reset,
                       Neuron_SurrogateAttr:$surrogate);
  let assemblyFormat = !strconcat([{
    `ins` `(` $h_seq `:` qualified(type($h_seq)) `)`
    (`x` `(` $x^ `:` qualified(type($x)) `)`)?
    (`init` `(` $v_init^ `:` qualified(type($v_init)) `)`)?
    `w` `(` $w `:` qualified(type($w)) `)`
  }], BackwardGradsFormat, [{
    `grad_w` `(` $grad_w `:` qualified(type($grad_w)) `)`
    `time` custom<Dim>($time) attr-dict
  }]);
}

//===----------------------------------------------------------------------===//
// The generic form
//===----------------------------------------------------------------------===//

def Neuron_YieldOp : Neuron_Op<"yield", [Pure, Terminator,
    ParentOneOf<["GenericOp", "GenericGradOp", "ModelOp"]>]> {
  let summary = "Yields a region's values: the charged state(s) or the threshold";
  let arguments = (ins Variadic<AnyFloat>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
  let extraClassDeclaration = [{
    /// The one value of a single-state charge region.
    ::mlir::Value getH() { return getValues().front(); }
  }];
}

def Neuron_GenericOp : Neuron_Op<"generic", [AttrSizedOperandSegments, SingleBlock]> {
  let summary = "A neuron given by its charge function, forward";
  let description = [{
    The `charge` region computes the potential after charge from the
    potential before it, one input value and the parameters:
    `^bb0(%v: f32, %x: f32, %p0: f32, ...)`, yielding `h` with
    `neuron.yield`. Parameters are 0-d tensors read once. Fire and reset
    follow as for every neuron. Arithmetic is in the region's type (f32 for
    f16/bf16 storage).

    ```mlir
    // A quadratic integrate-and-fire neuron.
    neuron.generic ins(%x : T) outs(%s : T) v_seq(%v : T) time t
        {v_threshold = 1.0, v_reset = 0.0} charge {
    ^bb0(%v: f32, %x: f32):
      ...
      neuron.yield %h : f32
    }
    ```
  }];
  let arguments = (ins Neuron_Read:$x, Neuron_OptRead:$v_init,
                       Neuron_Reads:$params,
                       Neuron_Write:$spike, Neuron_OptWrite:$v_seq,
                       Neuron_OptWrite:$h_seq, Neuron_OptWrite:$v_last,
                       Tdim_DimAttr:$time,
                       DefaultValuedAttr<F64Attr, "1.0">:$v_threshold,
                       OptionalAttr<F64Attr>:$v_reset);
  let regions = (region SizedRegion<1>:$charge);
  let assemblyFormat = [{
    `ins` `(` $x `:` qualified(type($x)) `)`
    (`init` `(` $v_init^ `:` qualified(type($v_init)) `)`)?
    (`params` `(` $params^ `:` qualified(type($params)) `)`)?
    `outs` `(` $spike `:` qualified(type($spike)) `)`
    (`v_seq` `(` $v_seq^ `:` qualified(type($v_seq)) `)`)?
    (`h_seq` `(` $h_seq^ `:` qualified(type($h_seq)) `)`)?
    (`v_last` `(` $v_last^ `:` qualified(type($v_last)) `)`)?
    `time` custom<Dim>($time) attr-dict `charge` $charge
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Neuron_GenericGradOp : Neuron_Op<"generic_grad", [AttrSizedOperandSegments, SingleBlock]> {
  let summary = "A neuron given by its charge function, backward through time";
  let description = [{
    The backward of `neuron.generic` with the same charge region. The
    derivatives of the charge with respect to the previous potential, the
    input and each parameter are derived from the region when the op is
    lowered; `x` and `v_init` are read only if those derivatives need them.
    Derivatives that need the input do without `x` when the charge is
    `A(v, params) + B(params) * x`: backward recovers x from `h_seq` as
    `(h - A) / B` (so B must not vanish; pass `x` when a parameter can
    switch the input off). `grad_params` receives one 0-d gradient per
    parameter, summed over all neurons and steps in a fixed order.
    `grad_v_last`, the gradient of the last potential (per neuron), starts
    the walk in place of zero.
  }];
  let arguments = (ins Neuron_Read:$h_seq, Neuron_OptRead:$x,
                       Neuron_OptRead:$v_init, Neuron_Reads:$params,
                       Neuron_OptRead:$grad_spike,
                       Neuron_OptRead:$grad_v_seq, Neuron_OptRead:$grad_v_last,
                       Neuron_Write:$grad_x, Neuron_OptWrite:$grad_v_init,
                       Arg<Variadic<Neuron_Tensor>, "", [MemWrite]>:$grad_params,
                       Tdim_DimAttr:$time,
                       DefaultValuedAttr<F64Attr, "1.0">:$v_threshold,
                       OptionalAttr<F64Attr>:$v_reset, UnitAttr:$detach_reset,
                       Neuron_SurrogateAttr:$surrogate);
  let regions = (region SizedRegion<1>:$charge);
  let assemblyFormat = [{
    `ins` `(` $h_seq `:` qualified(type($h_seq)) `)`
    (`x` `(` $x^ `:` qualified(type($x)) `)`)?
    (`init` `(` $v_init^ `:` qualified(type($v_init)) `)`)?
    (`params` `(` $params^ `:` qualified(type($params)) `)`)?
    (`grad_spike` `(` $grad_spike^ `:` qualified(type($grad_spike)) `)`)?
    (`grad_v_seq` `(` $grad_v_seq^ `:` qualified(type($grad_v_seq)) `)`)?
    (`grad_v_last` `(` $grad_v_last^ `:` qualified(type($grad_v_last)) `)`)?
    `outs` `(` $grad_x `:` qualified(type($grad_x)) `)`
    (`grad_v_init` `(` $grad_v_init^ `:` qualified(type($grad_v_init)) `)`)?
    (`grad_params` `(` $grad_params^ `:` qualified(type($grad_params)) `)`)?
    `time` custom<Dim>($time) attr-dict `charge` $charge
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}


//===----------------------------------------------------------------------===//
// Neuron models: a neuron written once, used by name
//===----------------------------------------------------------------------===//

def Neuron_ModelOp : Neuron_Op<"model", [Symbol, IsolatedFromAbove]> {
  let summary = "A neuron model: its states, inputs, parameters, charge, threshold and resets";
  let description = [{
    Defines a neuron once; `neuron.forward` and `neuron.backward` use it by
    name, and the backward pass (through every state, the threshold and the
    parameters) is derived from it.

    - `states(v = 0.0, w = 0.0)`: the state variables and their initial
      values (when no initial tensor is given). The first state is the one
      that fires.
    - `inputs(x)`: the input sequences.
    - `params(tau = 2.0, ...)`: parameters and their values, used where a
      forward or backward op does not bind them to a tensor.
    - `threshold(1.0)`, or `threshold { ^bb0(states..., params...): ... }`
      yielding the threshold from the states before the step (an adaptive
      threshold).
    - `reset(v = hard 0.0, w = add b)`: what a spike does to each state
      (see `#neuron.reset`); a state without one keeps its charged value.
    - `charge { ^bb0(states..., inputs..., params...): ... }`: one region
      computing every state's charged value, yielded in the states' order.

    Per step: `theta = threshold(states)`, `h = charge(states, inputs)`,
    `s = h[0] - theta >= 0`, then each state is reset from its `h`.
    Arithmetic is in the regions' float type: f32 for f32, f16 and bf16
    storage, f64 for f64. Every op of the regions must be one nerve can
    differentiate.

    ```mlir
    neuron.model @izhikevich states(v = 0.0, w = 0.0) inputs(x)
        params(tau = 2.0, a0 = 1.0, v_rest = -0.1, v_c = 0.8, tau_w = 2.0,
               a = 0.5, b = 0.1)
        threshold(1.0) reset(v = hard 0.0 value_grad, w = add b) charge {
    ^bb0(%v: f32, %w: f32, %x: f32, %tau: f32, %a0: f32, %v_rest: f32,
         %v_c: f32, %tau_w: f32, %a: f32, %b: f32):
      ...
      neuron.yield %h, %w_next : f32, f32
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrArrayAttr:$states, ArrayAttr:$state_inits,
                       StrArrayAttr:$inputs, StrArrayAttr:$params, ArrayAttr:$param_values,
                       OptionalAttr<F64Attr>:$v_threshold,
                       TypedArrayAttrBase<Neuron_ResetAttr, "resets">:$resets);
  let regions = (region SizedRegion<1>:$charge, MaxSizedRegion<1>:$threshold);
  let hasCustomAssemblyFormat = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The float type the regions compute in.
    ::mlir::FloatType getComputeType();
    /// Position of a state, input or parameter by name.
    std::optional<unsigned> stateIndex(::llvm::StringRef name);
    std::optional<unsigned> inputIndex(::llvm::StringRef name);
    std::optional<unsigned> paramIndex(::llvm::StringRef name);
    /// The reset of state `i`, null when it has none.
    ResetAttr resetOf(unsigned i);
    /// A state's initial value and a parameter's value.
    double stateInit(unsigned i);
    double paramValue(unsigned i);
  }];
}

// Operands of a model's forward and backward ops come in named groups,
// `init(v = %v0 : T, w = %w0 : T)`; `roles` holds each operand's
// `group:name` (`group` alone for `outs` and `grad_spike`).
class Neuron_ModelUseOp<string mnemonic> : Neuron_Op<mnemonic, [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let hasCustomAssemblyFormat = 1;
  code commonDeclarations = [{
    /// The operand of `group` for `name` ("" for an unnamed group), or null.
    ::mlir::Value lookup(::llvm::StringRef group, ::llvm::StringRef name = "");
    /// The model this op runs (null if the symbol does not name one).
    ModelOp getModelOp();
  }];
}

def Neuron_ForwardOp : Neuron_ModelUseOp<"forward"> {
  let summary = "Multi-step neurons of a model, forward";
  let description = [{
    Runs every neuron (every point of the inputs' dimensions other than
    `time`) of model `@name` through the time steps in order. Groups:
    `ins` (every input of the model, by name), `init` (initial state
    tensors, per neuron; absent states start from the model's values),
    `params` (parameters bound to tensors: 0-d, or over some of the
    neurons' dimensions, broadcast along the others), `outs` (the spikes),
    and per state `seq` (after reset, every step), `h_seq` (after charge,
    what backward reads) and `last` (the final value).

    ```mlir
    neuron.forward @izhikevich ins(x = %x : !seq) outs(%s : !seq)
        seq(v = %v : !seq, w = %w : !seq) h_seq(v = %h : !seq) time t
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$model, Variadic<Neuron_Tensor>:$tensors,
                       StrArrayAttr:$roles, Tdim_DimAttr:$time);
  let extraClassDeclaration = commonDeclarations;
}

def Neuron_BackwardOp : Neuron_ModelUseOp<"backward"> {
  let summary = "Multi-step neurons of a model, backward through time";
  let description = [{
    The gradients of model `@name`'s forward pass, walking time backwards
    through every state, the threshold and the parameters. It reads what
    forward saved: `h_seq` and/or `seq` of the states the derivatives need
    (the lowering says which are missing), `ins` when the derivatives read
    an input, `init` and `params` as forward had them, and the upstream
    gradients `grad_spike`, `grad_seq` (per state) and `grad_last` (per
    state and neuron: the gradient of its last value, which starts the
    walk); absent ones are zero. It writes `grad_ins` (per input), `grad_init` (per state) and
    `grad_params` (per parameter bound to a tensor, with that tensor's
    dimensions: summed over time and the dimensions it is broadcast along,
    in a fixed order). `surrogate` replaces the spike's derivative;
    `detach_reset` cuts the gradient through the spike in hard and soft
    resets; `detach_threshold` through an adaptive threshold.
  }];
  let arguments = (ins FlatSymbolRefAttr:$model, Variadic<Neuron_Tensor>:$tensors,
                       StrArrayAttr:$roles, Tdim_DimAttr:$time,
                       Neuron_SurrogateAttr:$surrogate, UnitAttr:$detach_reset,
                       UnitAttr:$detach_threshold);
  let extraClassDeclaration = commonDeclarations;
}

#endif // NERVE_DIALECTS_NEURON_OPS
