//===- NeuronModelsTest.cpp - neuron models from expressions, built-ins ---===//

#include "nerve/Builders.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace nerve;

namespace {

CompileOptions cpu() {
  CompileOptions o;
  o.target = Target::CPU;
  return o;
}

/// A kernel running `model` forward over x[t, n] in f64: spikes and every
/// state's sequence.
std::string forwardKernel(const NeuronModelDef &model) {
  std::string seqs, results;
  for (const auto &[state, init] : model.states) {
    seqs += (seqs.empty() ? "" : ", ") + state + " = %" + state + " : !seq";
    results += ", %" + state + ": !seq";
  }
  return "!seq = !tdim.tensor<[t: ?, n: ?], f64>\n"
         "tdim.kernel @run(%x: !seq) -> (%s: !seq" +
         results + ") {\n  neuron.forward @" + model.name +
         " ins(x = %x : !seq) outs(%s : !seq) seq(" + seqs + ") time t\n  tdim.return\n}\n";
}

TEST(NeuronModels, AdaptiveLIFMatchesItsDefinition) {
  // theta = 1 + beta a (a before the step); h = v + (x - v) / tau;
  // soft reset against theta; a' = rho a + s.
  BuiltinNeuron alif{"alif", "", "f64", {{"beta", 0.5}, {"rho", 0.75}}, 1.0, std::nullopt};
  Result<NeuronModelDef> def = builtinNeuronModel(alif);
  ASSERT_TRUE(def) << def.message();
  Result<std::string> model = neuronModelSpec(*def);
  ASSERT_TRUE(model) << model.message();
  auto m = compile(*model + forwardKernel(*def), cpu());
  ASSERT_TRUE(m) << m.message();
  const int64_t T = 6, N = 3;
  std::vector<double> x = {1.5, 0.2, 3.0, 1.5, 0.9, 0.0, 1.5, 2.5, 0.1,
                           1.5, 0.3, 2.0, 1.5, 1.1, 0.0, 1.5, 0.0, 2.2};
  std::vector<double> s(T * N), v(T * N), a(T * N);
  Status st = (*m)->run("run", {Arg::tensor(x.data(), {T, N}), Arg::tensor(s.data(), {T, N}),
                                Arg::tensor(v.data(), {T, N}), Arg::tensor(a.data(), {T, N})});
  ASSERT_TRUE(st) << st.message();
  for (int64_t n = 0; n < N; ++n) {
    double vn = 0, an = 0;
    for (int64_t t = 0; t < T; ++t) {
      double theta = 1.0 + 0.5 * an;
      double h = vn + (x[t * N + n] - vn) / 2.0;
      double spike = h - theta >= 0 ? 1.0 : 0.0;
      vn = h - spike * theta;
      an = 0.75 * an + spike;
      EXPECT_EQ(s[t * N + n], spike) << "t " << t << " n " << n;
      EXPECT_NEAR(v[t * N + n], vn, 1e-14) << "t " << t << " n " << n;
      EXPECT_NEAR(a[t * N + n], an, 1e-14) << "t " << t << " n " << n;
    }
  }
}

TEST(NeuronModels, AdExReadsThePotentialBeforeTheStep) {
  BuiltinNeuron adex{"adex", "", "f64", {}, 1.0, 0.0};
  Result<NeuronModelDef> def = builtinNeuronModel(adex);
  ASSERT_TRUE(def) << def.message();
  Result<std::string> model = neuronModelSpec(*def);
  ASSERT_TRUE(model) << model.message();
  auto m = compile(*model + forwardKernel(*def), cpu());
  ASSERT_TRUE(m) << m.message();
  const int64_t T = 5, N = 2;
  std::vector<double> x = {0.8, 2.0, 0.4, 0.0, 1.2, 3.0, 0.1, 0.5, 0.9, 0.0};
  std::vector<double> s(T * N), v(T * N), w(T * N);
  Status st = (*m)->run("run", {Arg::tensor(x.data(), {T, N}), Arg::tensor(s.data(), {T, N}),
                                Arg::tensor(v.data(), {T, N}), Arg::tensor(w.data(), {T, N})});
  ASSERT_TRUE(st) << st.message();
  // Defaults: tau 2, delta_t 1, theta_rh 0.8, v_rest 0, tau_w 2, a 0.5, b 0.1.
  for (int64_t n = 0; n < N; ++n) {
    double vn = 0, wn = 0;
    for (int64_t t = 0; t < T; ++t) {
      double h = vn + (x[t * N + n] - vn + std::exp(vn - 0.8) - wn) / 2.0;
      double w1 = wn + (0.5 * vn - wn) / 2.0;
      double spike = h - 1.0 >= 0 ? 1.0 : 0.0;
      vn = spike ? 0.0 : h;
      wn = w1 + 0.1 * spike;
      EXPECT_EQ(s[t * N + n], spike) << "t " << t << " n " << n;
      EXPECT_NEAR(v[t * N + n], vn, 1e-14) << "t " << t << " n " << n;
      EXPECT_NEAR(w[t * N + n], wn, 1e-14) << "t " << t << " n " << n;
    }
  }
}

TEST(NeuronModels, ANeuronFromExpressions) {
  // A neuron nerve has no name for: a leaky potential with a quadratic
  // term and a threshold that rises with a second state.
  NeuronModelDef def{"mine",
                     "f32",
                     {{"v", 0.0}, {"u", 0.0}},
                     {"x"},
                     {{"tau", 4.0}, {"k", 0.5}},
                     "v = v + (x - v + k * v * v) / tau; u = 0.5 * u",
                     "1 + u",
                     {"v = hard 0", "u = add k"}};
  Result<std::string> spec = neuronModelSpec(def);
  ASSERT_TRUE(spec) << spec.message();
  EXPECT_NE(spec->find("neuron.model @mine states(v = "), std::string::npos) << *spec;
  EXPECT_NE(spec->find("threshold {"), std::string::npos) << *spec;
  EXPECT_NE(spec->find("reset(v = hard 0, u = add k)"), std::string::npos) << *spec;
}

TEST(NeuronModels, MistakesAreExplained) {
  auto message = [](const Result<NeuronModelDef> &r) { return r ? "" : r.message(); };
  EXPECT_EQ(message(builtinNeuronModel({"hodgkin", "", "f32", {}, 1.0, 0.0})),
            "unknown built-in neuron 'hodgkin' (known: qif, eif, izhikevich, alif, adex)");
  EXPECT_EQ(message(builtinNeuronModel({"qif", "", "f32", {{"tau_w", 2.0}}, 1.0, 0.0})),
            "qif has no parameter 'tau_w' (its parameters: tau, a0, v_rest, v_c)");
  NeuronModelDef def{"m", "f32", {{"v", 0.0}}, {"x"}, {}, "x = v", "1", {}};
  Result<std::string> spec = neuronModelSpec(def);
  ASSERT_FALSE(spec);
  EXPECT_EQ(spec.message(), "neuron model 'm': charge: 'x' is an input and cannot be assigned to");
  def.charge = "v = v + y";
  spec = neuronModelSpec(def);
  ASSERT_FALSE(spec);
  EXPECT_NE(spec.message().find("unknown name 'y'"), std::string::npos) << spec.message();
  def.charge = "v = floor(v) + sin(x)";
  spec = neuronModelSpec(def);
  ASSERT_FALSE(spec);
  def.computeType = "f16";
  def.charge = "v = v + x";
  spec = neuronModelSpec(def);
  ASSERT_FALSE(spec);
  EXPECT_EQ(spec.message(),
            "neuron model 'm': compute type 'f16': a model computes in f32 or f64");
}

} // namespace
