//===- NeuronModels.cpp - the built-in neuron models --------------------===//
//
// QIF, EIF and Izhikevich as SpikingJelly's step functions compute them
// (quirks included: Izhikevich's hard reset keeps the spike's gradient in
// its `s * v_reset` term), adaptive LIF and AdEx as docs/neuron.md defines
// them. Each is a NeuronModelDef, compiled like a user's own neuron.
//
//===----------------------------------------------------------------------===//

#include "nerve/Builders.h"

#include <algorithm>
#include <cstdio>

using namespace nerve;

namespace {

struct Builtin {
  const char *kind;
  /// Parameters and defaults, in order.
  std::vector<std::pair<std::string, double>> params;
  /// Extra states after `v`, with their initial values.
  std::vector<std::pair<std::string, double>> states;
  /// The charge; `V_LEAK` stands for the potential a LIF-like charge leaks
  /// towards (v_reset for hard reset, 0 for soft).
  std::string charge;
  /// The threshold; `V_TH` stands for v_threshold.
  std::string threshold;
  /// Resets of the states after `v`.
  std::vector<std::string> resets;
  /// Whether v's hard reset keeps the spike's gradient in its value term.
  bool valueGrad = false;
};

const std::vector<Builtin> &builtins() {
  static const std::vector<Builtin> all = {
      {"qif",
       {{"tau", 2.0}, {"a0", 1.0}, {"v_rest", 0.0}, {"v_c", 0.8}},
       {},
       "v = v + (x + a0 * (v - v_rest) * (v - v_c)) / tau",
       "V_TH",
       {}},
      {"eif",
       {{"tau", 2.0}, {"delta_t", 1.0}, {"theta_rh", 0.8}, {"v_rest", 0.0}},
       {},
       "v = v + (x + v_rest - v + delta_t * exp((v - theta_rh) / delta_t)) / tau",
       "V_TH",
       {}},
      {"izhikevich",
       {{"tau", 2.0},
        {"a0", 1.0},
        {"v_rest", -0.1},
        {"v_c", 0.8},
        {"tau_w", 2.0},
        {"a", 0.0},
        {"b", 0.0}},
       {{"w", 0.0}},
       "v = v + (x + a0 * (v - v_rest) * (v - v_c) - w) / tau;"
       "w = w + (a * (v - v_rest) - w) / tau_w",
       "V_TH",
       {"w = add b"},
       /*valueGrad=*/true},
      // Adaptive LIF (Bellec et al. 2018): theta = v_th + beta a, with a
      // the adaptation before the step; a' = rho a + s.
      {"alif",
       {{"tau", 2.0}, {"rho", 0.951229424500714}, {"beta", 1.8}},
       {{"a", 0.0}},
       "v = v + (x - (v - V_LEAK)) / tau; a = rho * a",
       "V_TH + beta * a",
       {"a = add 1.0"}},
      // AdEx (Brette & Gerstner 2005), forward Euler: w's update reads v
      // before the step.
      {"adex",
       {{"tau", 2.0},
        {"delta_t", 1.0},
        {"theta_rh", 0.8},
        {"v_rest", 0.0},
        {"tau_w", 2.0},
        {"a", 0.5},
        {"b", 0.1}},
       {{"w", 0.0}},
       "v0 = v; v = v + (x - (v - v_rest) + delta_t * exp((v - theta_rh) / delta_t) - w) / tau;"
       "w = w + (a * (v0 - v_rest) - w) / tau_w",
       "V_TH",
       {"w = add b"}},
  };
  return all;
}

const Builtin *findBuiltin(const std::string &kind) {
  for (const Builtin &b : builtins())
    if (kind == b.kind)
      return &b;
  return nullptr;
}

std::string unknownKind(const std::string &kind) {
  std::string known;
  for (const Builtin &b : builtins())
    known += (known.empty() ? "" : ", ") + std::string(b.kind);
  return "unknown built-in neuron '" + kind + "' (known: " + known + ")";
}

std::string number(double v) {
  char text[40];
  std::snprintf(text, sizeof(text), "%.17e", v);
  return text;
}

std::string replaceAll(std::string text, const std::string &from, const std::string &to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

} // namespace

Result<std::vector<std::pair<std::string, double>>>
nerve::builtinNeuronParams(const std::string &kind) {
  const Builtin *b = findBuiltin(kind);
  if (!b)
    return Status::error(unknownKind(kind));
  return b->params;
}

Result<NeuronModelDef> nerve::builtinNeuronModel(const BuiltinNeuron &neuron) {
  const Builtin *b = findBuiltin(neuron.kind);
  if (!b)
    return Status::error(unknownKind(neuron.kind));
  NeuronModelDef def;
  def.name = neuron.name.empty() ? neuron.kind : neuron.name;
  def.computeType = neuron.computeType;
  def.states.push_back({"v", neuron.vReset.value_or(0.0)});
  def.states.insert(def.states.end(), b->states.begin(), b->states.end());
  def.inputs = {"x"};
  def.params = b->params;
  for (const auto &override : neuron.params) {
    const std::string &name = override.first;
    auto it = std::find_if(def.params.begin(), def.params.end(),
                           [&](const auto &p) { return p.first == name; });
    if (it == def.params.end()) {
      std::string known;
      for (const auto &p : b->params)
        known += (known.empty() ? "" : ", ") + p.first;
      return Status::error(neuron.kind + " has no parameter '" + name + "' (its parameters: " +
                           known + ")");
    }
    it->second = override.second;
  }
  def.charge = replaceAll(b->charge, "V_LEAK", number(neuron.vReset.value_or(0.0)));
  def.threshold = replaceAll(b->threshold, "V_TH", number(neuron.vThreshold));
  if (neuron.vReset)
    def.resets.push_back("v = hard " + number(*neuron.vReset) + (b->valueGrad ? " value_grad" : ""));
  else
    def.resets.push_back("v = soft");
  def.resets.insert(def.resets.end(), b->resets.begin(), b->resets.end());
  return def;
}
