//===- NeuronModelSpec.cpp - neuron models from expressions -------------===//
//
// A NeuronModelDef (states, parameters, charge statements, a threshold,
// resets) written out as the neuron.model op, its charge and threshold
// regions from the builders' expression language. Built with exceptions,
// as Builders.cpp is: a Failure thrown while parsing is returned as a
// Status here.
//
//===----------------------------------------------------------------------===//

#include "Expressions.h"

#include "nerve/Builders.h"

using namespace nerve;
using namespace nerve::expr;

namespace {

/// A number as the neuron.model syntax reads it (always with an exponent).
std::string modelNumber(double v) {
  if (!std::isfinite(v))
    throw Failure{"values must be finite, not " + std::to_string(v)};
  char text[40];
  std::snprintf(text, sizeof(text), "%.17e", v);
  return text;
}

/// `(a = 1.0, b = 2.0)` or `(x, y)`.
std::string namedList(const std::vector<std::pair<std::string, double>> &entries) {
  std::string s;
  for (const auto &[name, value] : entries)
    s += (s.empty() ? "" : ", ") + name + " = " + modelNumber(value);
  return "(" + s + ")";
}

/// The threshold: `threshold(1.0)` for a number, else a region of the
/// states and parameters.
std::string thresholdText(const NeuronModelDef &m) {
  std::string text = trim(m.threshold);
  char *end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (!text.empty() && end && *end == '\0')
    return "threshold(" + modelNumber(value) + ")";
  std::vector<std::string> lines;
  ExprEmitter e("threshold", m.computeType, lines);
  std::string args;
  for (const auto *list : {&m.states, &m.params})
    for (const auto &[name, value] : *list) {
      std::string arg = "%t_" + name;
      args += (args.empty() ? "" : ", ") + arg + ": " + m.computeType;
      e.names[name] = {arg};
    }
  ExprEmitter::Value v = e.parse(text);
  if (v.isBool)
    throw Failure{"threshold: '" + text + "' is a comparison, not a number"};
  lines.push_back("neuron.yield " + v.ssa + " : " + m.computeType);
  return "threshold {\n  ^bb0(" + args + "):\n" + indent(lines, "    ") + "  }";
}

std::string neuronModelSpecOrThrow(const NeuronModelDef &m) {
  checkName(m.name, "neuron model");
  if (m.computeType != "f32" && m.computeType != "f64")
    throw Failure{"compute type '" + m.computeType + "': a model computes in f32 or f64"};
  if (m.states.empty())
    throw Failure{"states: a neuron needs at least one state, its potential"};
  std::set<std::string> seen, readOnly;
  auto declare = [&](const std::string &name, const char *what) {
    if (!isIdentifier(name))
      throw Failure{std::string(what) + ": '" + name + "' is not a name"};
    if (!seen.insert(name).second)
      throw Failure{"'" + name + "' is declared twice"};
  };
  std::vector<std::string> lines;
  ExprEmitter e("charge", m.computeType, lines);
  std::string args;
  auto bind = [&](const std::string &name, const char *prefix) {
    std::string arg = std::string("%") + prefix + name;
    args += (args.empty() ? "" : ", ") + arg + ": " + m.computeType;
    e.names[name] = {arg};
  };
  for (const auto &[name, value] : m.states)
    declare(name, "states"), bind(name, "s_");
  for (const std::string &name : m.inputs)
    declare(name, "inputs"), bind(name, "i_"), readOnly.insert(name);
  for (const auto &[name, value] : m.params)
    declare(name, "params"), bind(name, "p_"), readOnly.insert(name);
  runStatements(e, "charge", m.charge, readOnly, [](const std::string &, const std::string &) {});
  std::string yields, types;
  for (const auto &[name, value] : m.states) {
    yields += (yields.empty() ? "" : ", ") + e.names[name].ssa;
    types += (types.empty() ? "" : ", ") + m.computeType;
  }
  lines.push_back("neuron.yield " + yields + " : " + types);

  std::string spec = "neuron.model @" + m.name + " states" + namedList(m.states) + " inputs(";
  for (size_t i = 0; i < m.inputs.size(); ++i)
    spec += (i ? ", " : "") + m.inputs[i];
  spec += ")";
  if (!m.params.empty())
    spec += " params" + namedList(m.params);
  spec += "\n    " + thresholdText(m);
  if (!m.resets.empty()) {
    spec += " reset(";
    for (size_t i = 0; i < m.resets.size(); ++i)
      spec += (i ? ", " : "") + trim(m.resets[i]);
    spec += ")";
  }
  spec += " charge {\n^bb0(" + args + "):\n" + indent(lines, "  ") + "}\n";
  return spec;
}
} // namespace

Result<std::string> nerve::neuronModelSpec(const NeuronModelDef &model) {
  try {
    return neuronModelSpecOrThrow(model);
  } catch (const Failure &f) {
    return Status::error("neuron model '" + model.name + "': " + f.message);
  }
}
