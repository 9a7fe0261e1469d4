//===- LaunchCUDATest.cpp - kernels on the GPU through the API ------------===//
//
// Skipped (and reported as skipped) where no CUDA driver and device exist.
//
//===----------------------------------------------------------------------===//

#include "nerve/nerve.h"

#include <gtest/gtest.h>

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
