//===- NeuronAttrs.td - surrogate gradients ----------------*- tablegen -*-===//

#ifndef NERVE_DIALECTS_NEURON_ATTRS
#define NERVE_DIALECTS_NEURON_ATTRS

include "nerve/Dialect/Neuron/IR/NeuronDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Neuron_SurrogateKind : I32EnumAttr<"SurrogateKind", "surrogate gradient function", [
    I32EnumAttrCase<"sigmoid", 0>,
    I32EnumAttrCase<"atan", 1>,
    I32EnumAttrCase<"piecewise_leaky_relu", 2>,
    I32EnumAttrCase<"s2nn", 3>,
    I32EnumAttrCase<"q_pseudo_spike", 4>,
    I32EnumAttrCase<"leaky_k_relu", 5>,
    I32EnumAttrCase<"fake_numerical_gradient", 6>,
    I32EnumAttrCase<"log_tailed_relu", 7>,
    I32EnumAttrCase<"piecewise_quadratic", 8>,
    I32EnumAttrCase<"piecewise_exp", 9>,
    I32EnumAttrCase<"soft_sign", 10>,
    I32EnumAttrCase<"super_spike", 11>,
    I32EnumAttrCase<"erf", 12>]> {
  let cppNamespace = "::nerve::neuron";
  let genSpecializedAttr = 0;
}

def Neuron_SurrogateAttr : AttrDef<Neuron_Dialect, "Surrogate"> {
  let mnemonic = "surrogate";
  let summary = "The surrogate gradient used in place of the spike's derivative";
  let description = [{
    `#neuron.surrogate<sigmoid, alpha = 4.0>`. The forward pass always fires
    with the Heaviside step; backward uses `g'(u)` at `u = h - v_threshold`.
    Parameters not written take SpikingJelly's defaults, and the printed
    form lists them all:

    | surrogate | parameters (defaults) | g'(u) |
    |---|---|---|
    | sigmoid | alpha 4 | alpha * s * (1 - s), s = sigmoid(alpha * u) |
    | atan | alpha 2 | (alpha / 2) / (1 + (pi / 2 * alpha * u)^2) |
    | piecewise_leaky_relu | w 1, c 0.01 | 1 / (2w) if \|u\| < w, else c |
    | s2nn | alpha 4, beta 1 | sigmoid's if u < 0, else beta / (u + 1) |
    | q_pseudo_spike | alpha 2 | (1 + 2\|u\| / (alpha - 1))^(-alpha) |
    | leaky_k_relu | leak 0, k 1 | k if u >= 0, else leak |
    | fake_numerical_gradient | alpha 0.3 | min(1 / \|u\|, alpha) |
    | log_tailed_relu | alpha 0 | alpha if u <= 0, 1 / u if u > 1, else 1 |
    | piecewise_quadratic | alpha 1 | max(0, alpha - alpha^2 \|u\|) |
    | piecewise_exp | alpha 1 | (alpha / 2) * exp(-alpha \|u\|) |
    | soft_sign | alpha 2 | 1 / (2 alpha (1 / alpha + \|u\|)^2) |
    | super_spike | alpha 1 | alpha / (\|u\| + 1)^2 |
    | erf | alpha 2 | (alpha / sqrt(pi)) * exp(-(alpha u)^2) |
  }];
  let parameters = (ins "SurrogateKind":$kind, "::mlir::DictionaryAttr":$params);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The value of parameter `name` (its default when not given).
    double getParam(::llvm::StringRef name) const;
  }];
}


def Neuron_ResetKind : I32EnumAttr<"ResetKind", "what a spike does to a neuron state", [
    I32EnumAttrCase<"hard", 0>,
    I32EnumAttrCase<"soft", 1>,
    I32EnumAttrCase<"add", 2>]> {
  let cppNamespace = "::nerve::neuron";
  let genSpecializedAttr = 0;
}

def Neuron_ResetAttr : AttrDef<Neuron_Dialect, "Reset"> {
  let mnemonic = "reset";
  let summary = "What a spike does to one state of a neuron model";
  let description = [{
    `#neuron.reset<v = hard 0.0>`: the state becomes the value when the
    neuron fires, `(1 - s) * h + s * value` (under `detach_reset` the
    gradient does not flow through `s`; with `value_grad`, as SpikingJelly's
    Izhikevich neuron, it still flows through the `s * value` term).
    `#neuron.reset<v = soft>`: subtracts the threshold, `h - s * theta`.
    `#neuron.reset<w = add b>` (a parameter) or `<w = add 0.5>`: adds the
    amount on a spike, `h + s * amount`; its spike is never detached (it is
    an adaptation, not a reset). A state without a reset keeps its charged
    value.
  }];
  let parameters = (ins "::mlir::StringAttr":$state, "ResetKind":$kind,
                        OptionalParameter<"::mlir::FloatAttr">:$value,
                        OptionalParameter<"::mlir::StringAttr">:$param,
                        "bool":$valueGrad);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    /// Parses and prints `state = kind ...` (what sits between `<` `>`).
    static ::mlir::FailureOr<ResetAttr> parseBody(::mlir::AsmParser &parser);
    void printBody(::mlir::AsmPrinter &printer) const;
  }];
}

#endif // NERVE_DIALECTS_NEURON_ATTRS
