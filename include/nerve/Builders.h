//===- Builders.h - kernels from declarations and expressions ----*- C++ -*-===//
//
// CuPy's ElementwiseKernel and ReductionKernel for nerve: declare the
// arguments with their element types and dimension names, write the body as
// C-like expressions, and get a compiled module (a tdim.map or tdim.reduce
// underneath, through the same compiler and caches as any spec).
//
//   auto k = nerve::elementwiseKernel("axpy", "f32 x[n], f32 y[n], f32 a",
//                                     "f32 z[n]", "z = a * x + y");
//   auto r = nerve::reductionKernel({"l2norm", "f32 x[b, n]", "f32 y[b]",
//                                    /*map=*/"x * x", /*combine=*/"a + b",
//                                    /*identity=*/"0", /*post=*/"sqrt(a)"});
//
// Declarations: `<type> <name>[<dim>, ...]` for tensors (a dimension may
// give its size, `n: 128`; otherwise it is bound at launch), `<type> <name>`
// for scalars; types f32, f16, bf16, f64. The same dimension name in two
// tensors is the same axis; a tensor without one of the output's dimensions
// is broadcast along it.
//
// Expressions compute in f32 (f64 if any argument is f64): numbers,
// names, + - * / (unary -), comparisons < <= > >= == !=, && || !, c ? a : b,
// and exp log sqrt rsqrt tanh sigmoid abs floor ceil min max pow where(c,a,b),
// constants inf and nan. An elementwise body is statements `name = expr`
// separated by `;` or new lines; names that are not outputs are temporaries.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_BUILDERS_H
#define NERVE_BUILDERS_H

#include "nerve/nerve.h"

#include <map>
#include <optional>

namespace nerve {

/// The spec text of an elementwise kernel (see the file comment).
Result<std::string> elementwiseSpec(const std::string &name, const std::string &inputs,
                                    const std::string &outputs, const std::string &body);

/// Builds and compiles an elementwise kernel; its one entry is `name`.
Result<std::shared_ptr<Module>> elementwiseKernel(const std::string &name,
                                                  const std::string &inputs,
                                                  const std::string &outputs,
                                                  const std::string &body,
                                                  const CompileOptions &options = {});

/// A reduction, as CuPy's ReductionKernel has it: `map` turns the inputs at
/// one point into a value, `combine` merges two values `a` and `b`,
/// `identity` is combine's neutral value, and `post` turns the result `a`
/// (and `count`, the number of elements combined) into the output. The
/// output's dimensions are kept; every other input dimension is reduced.
struct ReductionKernelSpec {
  std::string name;
  std::string inputs;
  std::string output;
  std::string map;
  std::string combine;
  std::string identity;
  std::string post = "a";
};

/// The spec text of a reduction kernel.
Result<std::string> reductionSpec(const ReductionKernelSpec &reduction);

/// Builds and compiles a reduction kernel; its one entry is `reduction.name`.
Result<std::shared_ptr<Module>> reductionKernel(const ReductionKernelSpec &reduction,
                                                const CompileOptions &options = {});

/// A neuron model from expressions: the `neuron.model` op of its
/// definition, for `neuron.forward` / `neuron.backward` to use by name
/// (docs/neuron.md, "Neuron models").
///
///   NeuronModelDef izh{"izh", "f32", {{"v", 0.0}, {"w", 0.0}}, {"x"},
///                      {{"tau", 2.0}, {"a", 0.5}, {"b", 0.1}, ...},
///                      "v = v + (x + a0 * (v - v_rest) * (v - v_c) - w) / tau;"
///                      "w = w + (a * (v - v_rest) - w) / tau_w",
///                      "1.0", {"v = hard 0.0 value_grad", "w = add b"}};
struct NeuronModelDef {
  std::string name;
  /// The type the model computes in: f32 (for f32, f16 and bf16 tensors)
  /// or f64.
  std::string computeType = "f32";
  /// The states and their initial values; the first is the one that fires.
  std::vector<std::pair<std::string, double>> states;
  std::vector<std::string> inputs = {"x"};
  /// Parameters and their values (a use may bind them to tensors instead).
  std::vector<std::pair<std::string, double>> params;
  /// The charge: statements `name = expression` run in order, reading the
  /// states (before the step), inputs, parameters and earlier statements'
  /// names. Each state's charged value is its name's value after the last
  /// statement (a state never assigned keeps its value).
  std::string charge;
  /// The threshold: a number, or an expression of the states before the
  /// step and the parameters (an adaptive threshold).
  std::string threshold = "1.0";
  /// What a spike does to each state: `v = hard 0.0` (`value_grad` after
  /// it keeps the gradient through the value term under detach_reset),
  /// `v = soft`, `w = add b` or `w = add 0.5`. States without one keep their
  /// charged value.
  std::vector<std::string> resets;
};

/// The `neuron.model` spec text of `model` (checked when compiled).
Result<std::string> neuronModelSpec(const NeuronModelDef &model);

/// A built-in neuron: QIF, EIF and Izhikevich with exactly SpikingJelly's
/// `qif_step` / `eif_step` / `izhikevich_step` semantics, adaptive LIF
/// (`alif`) and AdEx (`adex`) as docs/neuron.md defines them. Each is a
/// NeuronModelDef like any other: nerve has no per-neuron kernel.
struct BuiltinNeuron {
  /// qif, eif, izhikevich, alif or adex.
  std::string kind;
  /// The model's symbol; the kind when empty.
  std::string name;
  std::string computeType = "f32";
  /// Parameter values other than the defaults (builtinNeuronParams).
  std::map<std::string, double> params;
  double vThreshold = 1.0;
  /// Hard reset to this value, or soft reset when empty.
  std::optional<double> vReset = 0.0;
};

/// The parameters of built-in neuron `kind` with their defaults (SpikingJelly's
/// constructor defaults where it has the neuron), in the model's order.
Result<std::vector<std::pair<std::string, double>>> builtinNeuronParams(const std::string &kind);

/// The model definition of a built-in neuron.
Result<NeuronModelDef> builtinNeuronModel(const BuiltinNeuron &neuron);

/// The gradients a neuron model's backward is asked for.
struct NeuronModelGrads {
  /// Inputs and parameters whose gradient is asked for (the initial
  /// states' always are).
  std::vector<std::string> inputs, params;
  /// The surrogate, as the `#neuron.surrogate<...>` attribute spells it.
  std::string surrogate = "#neuron.surrogate<sigmoid>";
  bool detachReset = false;
  bool detachThreshold = false;
};

/// What forward must save for backward: the states whose charged values
/// (`h_seq`) and sequences (`seq`) backward reads, and the inputs it reads.
struct NeuronModelSaves {
  std::vector<std::string> hSeq, seq, inputs;
};

/// The fewest values backward of model @`model` (defined in `modelSpec`)
/// reads for `grads`: the compiler's own plan (the lowering of
/// `neuron.backward` reads the same when given them).
Result<NeuronModelSaves> neuronModelSaves(const std::string &modelSpec, const std::string &model,
                                          const NeuronModelGrads &grads);

} // namespace nerve

#endif // NERVE_BUILDERS_H
