//===- SizeSpecializationTest.cpp - kernels compiled for their sizes ----===//
//
// CompileOptions::staticSizes, ::entry and ::specializeSizes on the CPU:
// results against a float64 reference, one compile per set of sizes (the
// cache counters show each), the cap, and errors that say what is wrong.
//
//===----------------------------------------------------------------------===//

#include "ScratchDir.h"
#include "nerve/nerve.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

using namespace nerve;

namespace {

const char *kSpec = R"(
!m = !tdim.tensor<[r: ?, c: ?], f32>
!row = !tdim.tensor<[r: ?], f32>
tdim.kernel @softmax(%x: !m) -> (%y: !m) {
  tdim.softmax ins(%x : !m) outs(%y : !m) over c
  tdim.return
}
tdim.kernel @row_sum(%x: !m) -> (%s: !row) {
  tdim.reduce ins(%x : !m) outs(%s : !row) over [c] init [0.0 : f32]
    combine {
    ^bb0(%a: f32, %b: f32):
      %r = arith.addf %a, %b : f32
      tdim.yield %r : f32
    }
  tdim.return
}
)";

class SizeSpecialization : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(scratch.path.empty());
    clearMemoryCache();
  }
  CompileOptions options() const {
    CompileOptions o;
    o.target = Target::CPU;
    o.cacheDir = scratch.path.string();
    return o;
  }
  ScratchDir scratch{"nerve-size-specialization-test"};
};

/// Deterministic inputs of r x c.
std::vector<float> inputs(int64_t r, int64_t c) {
  std::vector<float> x(r * c);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)) * 3.0);
  return x;
}

/// Runs softmax at r x c and checks it against float64.
void expectSoftmax(const Module &m, int64_t r, int64_t c) {
  std::vector<float> x = inputs(r, c), y(r * c, -1.0f);
  Status s = m.run("softmax", {Arg::tensor(x.data(), {r, c}), Arg::tensor(y.data(), {r, c})});
  ASSERT_TRUE(s) << s.message();
  for (int64_t i = 0; i < r; ++i) {
    double max = -INFINITY, sum = 0;
    for (int64_t j = 0; j < c; ++j)
      max = std::max(max, static_cast<double>(x[i * c + j]));
    for (int64_t j = 0; j < c; ++j)
      sum += std::exp(x[i * c + j] - max);
    for (int64_t j = 0; j < c; ++j)
      ASSERT_NEAR(y[i * c + j], std::exp(x[i * c + j] - max) / sum, 1e-6)
          << r << " x " << c << " at " << i << ", " << j;
  }
}

uint64_t misses() { return cacheStats().misses; }

TEST_F(SizeSpecialization, StaticSizesAreCheckedAtLaunch) {
  CompileOptions o = options();
  o.staticSizes = {{"r", 3}, {"c", 50}};
  o.entry = "softmax";
  Result<std::shared_ptr<Module>> m = compile(kSpec, o);
  ASSERT_TRUE(m) << m.message();
  ASSERT_EQ((*m)->entries().size(), 1u);
  EXPECT_EQ((*m)->entries()[0].args[0].sizes, (std::vector<int64_t>{3, 50}));
  expectSoftmax(**m, 3, 50);
  std::vector<float> x(4 * 50), y(4 * 50);
  Status s = (*m)->run("softmax", {Arg::tensor(x.data(), {4, 50}), Arg::tensor(y.data(), {4, 50})});
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("dimension `r` is 3 in the spec but 4 was given"), std::string::npos)
      << s.message();
}

TEST_F(SizeSpecialization, EachSetOfSizesCompilesOnce) {
  CompileOptions o = options();
  o.specializeSizes = true;
  uint64_t before = misses();
  Result<std::shared_ptr<Module>> m = compile(kSpec, o);
  ASSERT_TRUE(m) << m.message();
  EXPECT_EQ(misses() - before, 0u) << "compile only parses";
  EXPECT_EQ((*m)->entries().size(), 2u);
  expectSoftmax(**m, 5, 33);
  EXPECT_EQ(misses() - before, 1u);
  expectSoftmax(**m, 5, 33);
  expectSoftmax(**m, 1, 300);
  EXPECT_EQ(misses() - before, 2u);
  // A new process (here: the memory cache emptied) finds them on disk.
  clearMemoryCache();
  Result<std::shared_ptr<Module>> again = compile(kSpec, o);
  ASSERT_TRUE(again) << again.message();
  uint64_t hits = cacheStats().diskHits;
  expectSoftmax(**again, 1, 300);
  EXPECT_EQ(cacheStats().diskHits - hits, 1u);
}

TEST_F(SizeSpecialization, PastTheCapSizesShareOneDynamicCompile) {
  CompileOptions o = options();
  o.specializeSizes = true;
  Result<std::shared_ptr<Module>> m = compile(kSpec, o);
  ASSERT_TRUE(m) << m.message();
  for (int i = 0; i < CompileOptions::kMaxSizeSpecializations; ++i)
    expectSoftmax(**m, 2, 10 + i);
  uint64_t before = misses();
  expectSoftmax(**m, 2, 100);
  expectSoftmax(**m, 3, 101);
  expectSoftmax(**m, 4, 7);
  EXPECT_EQ(misses() - before, 1u) << "one compile for dynamic sizes";
  // The cap is per kernel.
  std::vector<float> x = inputs(2, 3), s(2, 0);
  Status st = (*m)->run("row_sum", {Arg::tensor(x.data(), {2, 3}), Arg::tensor(s.data(), {2})});
  ASSERT_TRUE(st) << st.message();
  EXPECT_FLOAT_EQ(s[0], x[0] + x[1] + x[2]);
  EXPECT_EQ(misses() - before, 2u);
}

TEST_F(SizeSpecialization, LaunchesFromManyThreadsShareTheCompiles) {
  CompileOptions o = options();
  o.specializeSizes = true;
  Result<std::shared_ptr<Module>> m = compile(kSpec, o);
  ASSERT_TRUE(m) << m.message();
  uint64_t before = misses();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] { expectSoftmax(**m, 3, 40 + (t % 2)); });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(misses() - before, 2u);
}

TEST_F(SizeSpecialization, CompiledForWarmsUpAndReportsItsCompile) {
  CompileOptions o = options();
  o.specializeSizes = true;
  Result<std::shared_ptr<Module>> m = compile(kSpec, o);
  ASSERT_TRUE(m) << m.message();
  std::vector<float> x(4 * 9), y(4 * 9);
  std::vector<Arg> args = {Arg::tensor(x.data(), {4, 9}), Arg::tensor(y.data(), {4, 9})};
  uint64_t before = misses();
  Result<const Module *> compiled = (*m)->compiledFor("softmax", args);
  ASSERT_TRUE(compiled) << compiled.message();
  EXPECT_EQ(misses() - before, 1u);
  ASSERT_EQ((*compiled)->entries().size(), 1u);
  EXPECT_EQ((*compiled)->entries()[0].args[0].sizes, (std::vector<int64_t>{4, 9}));
  bool bound = false;
  for (const auto &[stage, ms] : (*compiled)->compileTimes())
    bound |= stage == "nerve-specialize-shapes";
  EXPECT_TRUE(bound);
  // The launch finds it; asking again gives the same module.
  expectSoftmax(**m, 4, 9);
  EXPECT_EQ(misses() - before, 1u);
  Result<const Module *> again = (*m)->compiledFor("softmax", args);
  ASSERT_TRUE(again) << again.message();
  EXPECT_EQ(*again, *compiled);
  Result<const Module *> none = (*m)->compiledFor("nope", args);
  ASSERT_FALSE(none);
  EXPECT_NE(none.message().find("no kernel @nope"), std::string::npos);
  // A module compiled as ever is its own.
  Result<std::shared_ptr<Module>> plain = compile(kSpec, options());
  ASSERT_TRUE(plain) << plain.message();
  Result<const Module *> self = (*plain)->compiledFor("softmax", args);
  ASSERT_TRUE(self) << self.message();
  EXPECT_EQ(*self, plain->get());
}

TEST_F(SizeSpecialization, BadArgumentsAndSpecsAreErrors) {
  CompileOptions o = options();
  o.specializeSizes = true;
  Result<std::shared_ptr<Module>> bad = compile("tdim.kernel @k( {", o);
  ASSERT_FALSE(bad);
  Result<std::shared_ptr<Module>> m = compile(kSpec, o);
  ASSERT_TRUE(m) << m.message();
  std::vector<float> x(6), y(6);
  Status s = (*m)->run("softmax", {Arg::tensor(x.data(), {2, 3}), Arg::tensor(y.data(), {3, 2})});
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("dimension `r`"), std::string::npos) << s.message();
  s = (*m)->run("nope", {});
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("no kernel @nope"), std::string::npos) << s.message();
  // Static sizes that contradict each other or the spec.
  CompileOptions twice = options();
  twice.staticSizes = {{"r", 3}, {"r", 4}};
  Result<std::shared_ptr<Module>> t = compile(kSpec, twice);
  ASSERT_FALSE(t);
  EXPECT_NE(t.message().find("dimension `r` has two static sizes"), std::string::npos)
      << t.message();
}

} // namespace
