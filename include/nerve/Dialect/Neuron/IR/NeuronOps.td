//===- NeuronOps.td - neuron operations --------------------*- tablegen -*-===//

#ifndef NERVE_DIALECTS_NEURON_OPS
#define NERVE_DIALECTS_NEURON_OPS

include "nerve/Dialect/Neuron/IR/NeuronAttrs.td"
include "nerve/Dialect/Tdim/IR/TdimTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

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
  `outs` `(` $grad_x `:` qualified(type($grad_x)) `)`
  (`grad_v_init` `(` $grad_v_init^ `:` qualified(type($grad_v_init)) `)`)?
}];

class Neuron_BackwardOp<string mnemonic, string neuronName>
    : Neuron_Op<mnemonic, [AttrSizedOperandSegments]> {
  let summary = "Multi-step " # neuronName # " neurons, backward through time";
  let hasVerifier = 1;
  code commonDescription = [{
    From the saved `h_seq` and the upstream gradients on the spikes and on
    `v_seq` (either may be left out: zero), computes `grad_x` and, when
    asked, `grad_v_init`, walking time backwards:
    `G_V[t] = grad_v_seq[t] + kappa * G_H[t+1]`,
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
                       Neuron_OptRead:$grad_v_seq,
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
                       Neuron_OptRead:$grad_v_seq,
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
                       Neuron_OptRead:$grad_v_seq,
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
    ParentOneOf<["GenericOp", "GenericGradOp"]>]> {
  let summary = "Yields the potential after charge";
  let arguments = (ins AnyFloat:$h);
  let assemblyFormat = "$h attr-dict `:` type($h)";
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
  }];
  let arguments = (ins Neuron_Read:$h_seq, Neuron_OptRead:$x,
                       Neuron_OptRead:$v_init, Neuron_Reads:$params,
                       Neuron_OptRead:$grad_spike,
                       Neuron_OptRead:$grad_v_seq,
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
    `outs` `(` $grad_x `:` qualified(type($grad_x)) `)`
    (`grad_v_init` `(` $grad_v_init^ `:` qualified(type($grad_v_init)) `)`)?
    (`grad_params` `(` $grad_params^ `:` qualified(type($grad_params)) `)`)?
    `time` custom<Dim>($time) attr-dict `charge` $charge
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

#endif // NERVE_DIALECTS_NEURON_OPS
