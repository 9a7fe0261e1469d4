//===- BuildersTest.cpp - elementwise and reduction kernel builders ------===//

#include "nerve/nerve.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace nerve;

namespace {

CompileOptions cpu() {
  CompileOptions o;
  o.target = Target::CPU;
  return o;
}

TEST(Builders, ElementwiseAxpy) {
  auto k = elementwiseKernel("axpy", "f32 x[n], f32 y[n], f32 a", "f32 z[n]", "z = a * x + y",
                             cpu());
  ASSERT_TRUE(k) << k.message();
  const EntryInfo *e = (*k)->findEntry("axpy");
  ASSERT_NE(e, nullptr);
  ASSERT_EQ(e->args.size(), 4u);
  EXPECT_EQ(e->args[3].name, "z");
  EXPECT_TRUE(e->args[3].isOutput);
  std::vector<float> x = {1, 2, 3}, y = {10, 20, 30}, z(3);
  Status s = (*k)->run("axpy", {Arg::tensor(x.data(), {3}), Arg::tensor(y.data(), {3}),
                                Arg::scalar(2), Arg::tensor(z.data(), {3})});
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(z, (std::vector<float>{12, 24, 36}));
}

TEST(Builders, ElementwiseBroadcastsByNameAndHasTemporaries) {
  // y[t, n] = relu(x[t, n] * w[n]) and a second output, the sign.
  auto k = elementwiseKernel("scale_relu", "f32 x[t, n], f32 w[n]", "f32 y[t, n], f32 s[t, n]",
                             "p = x * w\ny = max(p, 0); s = p > 0 ? 1 : (p < 0 ? -1 : 0)",
                             cpu());
  ASSERT_TRUE(k) << k.message();
  std::vector<float> x = {1, -2, 3, 4, 0, -6}, w = {1, 2, -1}, y(6), s(6);
  Status st = (*k)->run("scale_relu", {Arg::tensor(x.data(), {2, 3}), Arg::tensor(w.data(), {3}),
                                       Arg::tensor(y.data(), {2, 3}),
                                       Arg::tensor(s.data(), {2, 3})});
  ASSERT_TRUE(st) << st.message();
  EXPECT_EQ(y, (std::vector<float>{1, 0, 0, 4, 0, 6}));
  EXPECT_EQ(s, (std::vector<float>{1, -1, -1, 1, 0, 1}));
}

TEST(Builders, EveryFunctionMatchesTheCLibrary) {
  struct Case {
    const char *expr;
    double (*reference)(double);
  };
  const Case cases[] = {
      {"exp(x)", [](double v) { return std::exp(v); }},
      {"log(x)", [](double v) { return std::log(v); }},
      {"sqrt(x)", [](double v) { return std::sqrt(v); }},
      {"rsqrt(x)", [](double v) { return 1 / std::sqrt(v); }},
      {"tanh(x)", [](double v) { return std::tanh(v); }},
      {"sigmoid(x)", [](double v) { return 1 / (1 + std::exp(-v)); }},
      {"abs(-x)", [](double v) { return std::fabs(v); }},
      {"floor(x)", [](double v) { return std::floor(v); }},
      {"ceil(x)", [](double v) { return std::ceil(v); }},
      {"pow(x, 1.5)", [](double v) { return std::pow(v, 1.5); }},
      {"min(x, 1) + max(x, 2)", [](double v) { return std::min(v, 1.0) + std::max(v, 2.0); }},
      {"where(x >= 1 && !(x == 2) || x < 0.5, x, -x)",
       [](double v) { return (v >= 1 && v != 2) || v < 0.5 ? v : -v; }},
      {"-x / 4 - 1e-1", [](double v) { return -v / 4 - 0.1; }},
  };
  std::vector<double> x = {0.25, 0.75, 1.0, 2.0, 3.5};
  for (const Case &c : cases) {
    auto k = elementwiseKernel("f", "f64 x[n]", "f64 y[n]", std::string("y = ") + c.expr, cpu());
    ASSERT_TRUE(k) << c.expr << ": " << k.message();
    std::vector<double> y(x.size());
    Status s = (*k)->run("f", {Arg::tensor(x.data(), {5}), Arg::tensor(y.data(), {5})});
    ASSERT_TRUE(s) << s.message();
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_NEAR(y[i], c.reference(x[i]), 1e-12 * (1 + std::fabs(y[i])))
          << c.expr << " at " << x[i];
  }
}

TEST(Builders, HalfPrecisionComputesInF32) {
  auto spec = elementwiseSpec("h", "f16 x[n]", "bf16 y[n]", "y = x * 2");
  ASSERT_TRUE(spec) << spec.message();
  EXPECT_NE(spec->find("arith.extf"), std::string::npos) << *spec;
  EXPECT_NE(spec->find("arith.truncf"), std::string::npos) << *spec;
  EXPECT_TRUE(compile(*spec, cpu())) << *spec;
}

TEST(Builders, ReductionL2NormAndMean) {
  auto norm = reductionKernel({"l2norm", "f32 x[b, n]", "f32 y[b]", "x * x", "a + b", "0",
                               "sqrt(a)"},
                              cpu());
  ASSERT_TRUE(norm) << norm.message();
  std::vector<float> x = {3, 4, 0, 1, 1, 1}, y(2);
  Status s = (*norm)->run("l2norm", {Arg::tensor(x.data(), {2, 3}), Arg::tensor(y.data(), {2})});
  ASSERT_TRUE(s) << s.message();
  EXPECT_FLOAT_EQ(y[0], 5.0f);
  EXPECT_FLOAT_EQ(y[1], std::sqrt(3.0f));

  // Over the outer dimension, with a post-map that reads count.
  auto mean = reductionKernel({"col_mean", "f32 x[b, n]", "f32 m[n]", "x", "a + b", "0",
                               "a / count"},
                              cpu());
  ASSERT_TRUE(mean) << mean.message();
  std::vector<float> m(3);
  s = (*mean)->run("col_mean", {Arg::tensor(x.data(), {2, 3}), Arg::tensor(m.data(), {3})});
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(m, (std::vector<float>{2.0f, 2.5f, 0.5f}));

  // Everything to one value; a max with -inf as identity.
  auto max = reductionKernel({"total_max", "f32 x[b, n]", "f32 y[]", "abs(x)", "max(a, b)",
                              "-inf"},
                             cpu());
  ASSERT_TRUE(max) << max.message();
  std::vector<float> one(1);
  s = (*max)->run("total_max", {Arg::tensor(x.data(), {2, 3}), Arg::tensor(one.data(), {})});
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(one[0], 4.0f);
}

void expectError(Result<std::string> r, const std::string &fragment) {
  ASSERT_FALSE(r) << "built without error:\n" << *r;
  EXPECT_NE(r.message().find(fragment), std::string::npos)
      << "message: " << r.message() << "\nexpected: " << fragment;
}

TEST(Builders, MistakesAreExplained) {
  expectError(elementwiseSpec("k", "i32 x[n]", "f32 y[n]", "y = x"),
              "elementwise kernel 'k': inputs: 'i32' in 'i32 x[n]' is not an element type");
  expectError(elementwiseSpec("k", "f32 x[n]", "f32 y[n]", "y = x + q"),
              "body: unknown name 'q' (known: x) at column 6 of ' x + q'");
  expectError(elementwiseSpec("k", "f32 x[n]", "f32 y[n]", "y = x +"),
              "body: an expression is missing");
  expectError(elementwiseSpec("k", "f32 x[n]", "f32 y[n]", "y = foo(x)"),
              "unknown function 'foo'");
  expectError(elementwiseSpec("k", "f32 x[n]", "f32 y[n]", "y = exp(x, x)"),
              "exp takes 1 argument, not 2");
  expectError(elementwiseSpec("k", "f32 x[n]", "f32 y[n], f32 z[n]", "y = x"),
              "output 'z' is never assigned");
  expectError(elementwiseSpec("k", "f32 x[n]", "f32 y[n]", "x = 1; y = x"),
              "'x' is an input and cannot be assigned to");
  expectError(elementwiseSpec("k", "f32 x[n, n]", "f32 y[n]", "y = x"),
              "dimension 'n' appears twice");
  expectError(elementwiseSpec("k", "f32 x[n]", "f32 y", "y = x"), "'y' is a scalar");
  expectError(elementwiseSpec("k", "f32 x[n]", "f32 y[n]", "y = x < 1"),
              "is given a comparison");
  expectError(elementwiseSpec("k", "f32 x[n]", "f32 x[n]", "x = 1"), "'x' is declared twice");
  expectError(elementwiseSpec("1k", "f32 x[n]", "f32 y[n]", "y = x"), "not a kernel name");
  expectError(reductionSpec({"r", "f32 x[n]", "f32 y[n]", "x", "a + b", "0"}),
              "nothing is reduced");
  expectError(reductionSpec({"r", "f32 x[n]", "f32 y[m]", "x", "a + b", "0"}),
              "dimension 'm' is in no input");
  expectError(reductionSpec({"r", "f32 x[n]", "f32 y[]", "x", "a + c", "0"}),
              "combine: unknown name 'c'");
  expectError(reductionSpec({"r", "f32 x[n]", "f32 y[]", "x", "a + b", "zero"}),
              "identity: 'zero' is not a number");
  // What only the compiler can see comes back from it, naming the builder.
  auto k = elementwiseKernel("k", "f32 x[n: 4]", "f32 y[n: 5]", "y = x", cpu());
  ASSERT_FALSE(k);
  EXPECT_NE(k.message().find("elementwise kernel 'k'"), std::string::npos) << k.message();
}

} // namespace
