//===- LaunchCUDATest.cpp - kernels on the GPU through the API ------------===//
//
// Skipped (and reported as skipped) where no CUDA driver and device exist.
//
//===----------------------------------------------------------------------===//

#include "nerve/nerve.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace nerve;

namespace {

const char *kSpec = R"(
!v = !tdim.tensor<[n: ?], f32>
tdim.kernel @axpy(%x: !v, %y: !v, %a: f32) -> (%z: !v) {
  tdim.map ins(%x, %y : !v, !v) outs(%z : !v) {
  ^bb0(%p: f32, %q: f32):
    %s = arith.mulf %a, %p : f32
    %r = arith.addf %s, %q : f32
    tdim.yield %r : f32
  }
  tdim.return
}
)";

TEST(LaunchCUDA, RunsOnHostArraysThroughTheDevice) {
  std::string why;
  if (!cudaAvailable(&why))
    GTEST_SKIP() << why;
  CompileOptions o;
  o.target = Target::CUDA;
  Result<std::shared_ptr<Module>> m = compile(kSpec, o);
  ASSERT_TRUE(m) << m.message();
  EXPECT_FALSE((*m)->ptx().empty());
  const int64_t n = 100003; // not a multiple of the block size
  std::vector<float> x(n), y(n), z(n, 0);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 17);
    y[i] = static_cast<float>(i % 5) - 2;
  }
  Status s = (*m)->run("axpy", {Arg::tensor(x.data(), {n}), Arg::tensor(y.data(), {n}),
                                Arg::scalar(0.5), Arg::tensor(z.data(), {n})});
  ASSERT_TRUE(s) << s.message();
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(z[i], 0.5f * x[i] + y[i]) << "element " << i;
}

TEST(LaunchCUDA, CompilesForTheGPUWhenAutoFindsOne) {
  std::string why;
  if (!cudaAvailable(&why))
    GTEST_SKIP() << why;
  Result<std::shared_ptr<Module>> m = compile(kSpec);
  ASSERT_TRUE(m) << m.message();
  EXPECT_EQ((*m)->target(), Target::CUDA);
}

TEST(LaunchCUDA, BuildersRunOnTheGPU) {
  std::string why;
  if (!cudaAvailable(&why))
    GTEST_SKIP() << why;
  CompileOptions o;
  o.target = Target::CUDA;
  auto norm = reductionKernel({"l2norm", "f32 x[b, n]", "f32 y[b]", "x * x", "a + b", "0",
                               "sqrt(a)"},
                              o);
  ASSERT_TRUE(norm) << norm.message();
  const int64_t b = 7, n = 1000;
  std::vector<float> x(b * n), y(b);
  for (int64_t i = 0; i < b * n; ++i)
    x[i] = static_cast<float>(i % 3); // 0 1 2: exact sums
  Status s = (*norm)->run("l2norm", {Arg::tensor(x.data(), {b, n}), Arg::tensor(y.data(), {b})});
  ASSERT_TRUE(s) << s.message();
  for (int64_t r = 0; r < b; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < n; ++c)
      sum += double(x[r * n + c]) * x[r * n + c];
    EXPECT_FLOAT_EQ(y[r], static_cast<float>(std::sqrt(sum))) << "row " << r;
  }
  auto relu = elementwiseKernel("relu", "f16 x[n]", "f16 y[n]", "y = max(x, 0)", o);
  ASSERT_TRUE(relu) << relu.message();
}

TEST(LaunchCUDA, AWarmStartRunsFromTheDiskCache) {
  std::string why;
  if (!cudaAvailable(&why))
    GTEST_SKIP() << why;
  CompileOptions o;
  o.target = Target::CUDA;
  o.neuronTimeBlock = 7; // a key of this test's own
  Result<std::shared_ptr<Module>> cold = compile(kSpec, o);
  ASSERT_TRUE(cold) << cold.message();
  clearMemoryCache();
  Result<std::shared_ptr<Module>> warm = compile(kSpec, o);
  ASSERT_TRUE(warm) << warm.message();
  ASSERT_FALSE((*warm)->compileTimes().empty());
  EXPECT_EQ((*warm)->compileTimes().front().first, "read disk cache");
  EXPECT_EQ((*warm)->ptx(), (*cold)->ptx());
  std::vector<float> x = {1, 2}, y = {3, 4}, z(2);
  Status s = (*warm)->run("axpy", {Arg::tensor(x.data(), {2}), Arg::tensor(y.data(), {2}),
                                   Arg::scalar(2), Arg::tensor(z.data(), {2})});
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(z, (std::vector<float>{5, 8}));
}

TEST(LaunchCUDA, WithoutAGPUSaysWhy) {
  std::string why;
  if (cudaAvailable(&why))
    GTEST_SKIP() << "a GPU is present";
  EXPECT_FALSE(why.empty());
  CompileOptions o;
  o.target = Target::CUDA;
  Result<std::shared_ptr<Module>> m = compile(kSpec, o);
  ASSERT_FALSE(m);
  EXPECT_NE(m.message().find(why), std::string::npos) << m.message();
}

} // namespace
