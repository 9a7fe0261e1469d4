//===- FakeDriverFaultTest.cpp - GPU failures against the stand-in driver -===//
//
// The failure paths of GpuFaultTest.cpp on machines without a GPU: CTest
// runs this binary with the stand-in libcuda.so.1 (test/stubs/FakeCuda.cpp)
// first on the library path, and $NERVE_FAKE_CUDA set per step picks the
// failure. Its kernels compute nothing, so these tests check statuses and
// recovery, not results (GpuFaultTest does those on a GPU).
//
//===----------------------------------------------------------------------===//

#include "nerve/Runtime/CudaDriver.h"
#include "nerve/nerve.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

using namespace nerve;

namespace {

const char *kSpec = R"(
!v = !tdim.tensor<[n: ?], f32>
tdim.kernel @twice(%x: !v) -> (%y: !v) {
  tdim.map ins(%x : !v) outs(%y : !v) {
  ^bb0(%p: f32):
    %r = arith.addf %p, %p : f32
    tdim.yield %r : f32
  }
  tdim.return
}
)";

const char *kOther = R"(
!v = !tdim.tensor<[n: ?], f32>
tdim.kernel @negate(%x: !v) -> (%y: !v) {
  tdim.map ins(%x : !v) outs(%y : !v) {
  ^bb0(%p: f32):
    %r = arith.negf %p : f32
    tdim.yield %r : f32
  }
  tdim.return
}
)";

/// Sets $NERVE_FAKE_CUDA for one scope.
struct FakeMode {
  explicit FakeMode(const char *mode) { setenv("NERVE_FAKE_CUDA", mode, 1); }
  ~FakeMode() { unsetenv("NERVE_FAKE_CUDA"); }
};

bool fakeDriver(std::string *why) {
  if (!cudaAvailable(why))
    return false;
  if ((*cuda::Device::get())->name() != "nerve fake GPU") {
    *why = "a real GPU is here (GpuFaultTest covers it)";
    return false;
  }
  return true;
}

Result<std::shared_ptr<Module>> compileUncached(const char *spec) {
  CompileOptions o;
  o.target = Target::CUDA;
  o.cache = false;
  return compile(spec, o);
}

Status runOn(const Module &m, const std::string &entry) {
  std::vector<float> x(100, 1.0f), y(100);
  return m.run(entry, {Arg::tensor(x.data(), {100}), Arg::tensor(y.data(), {100})});
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

TEST(FakeDriverFault, AFaultLosesTheContextForEveryModuleUntilReset) {
  std::string why;
  if (!fakeDriver(&why))
    GTEST_SKIP() << why;
  auto twice = compileUncached(kSpec);
  auto negate = compileUncached(kOther);
  ASSERT_TRUE(twice) << twice.message();
  ASSERT_TRUE(negate) << negate.message();
  ASSERT_TRUE(runOn(**twice, "twice"));

  Status s;
  {
    FakeMode fault("fault");
    s = runOn(**twice, "twice");
  }
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "running kernel @twice on the GPU: an illegal memory access was "
                         "encountered (CUDA_ERROR_ILLEGAL_ADDRESS); the CUDA context cannot be "
                         "used any more (nerve::resetDevice() starts a new one)");

  // The other module, a launch on caller buffers and a new compile all
  // refuse, naming the first fault.
  const std::string lost =
      "the GPU cannot run kernels after an earlier fault (running kernel @twice on the GPU: an "
      "illegal memory access was encountered (CUDA_ERROR_ILLEGAL_ADDRESS)); call "
      "nerve::resetDevice() to start a new CUDA context";
  s = runOn(**negate, "negate");
  EXPECT_EQ(s.message(), lost);
  float buffer[4];
  s = (*negate)->launch("negate", {Arg::tensor(buffer, {4}), Arg::tensor(buffer, {4})});
  EXPECT_EQ(s.message(), lost);
  auto late = compileUncached(kSpec);
  ASSERT_FALSE(late);
  EXPECT_TRUE(contains(late.message(), lost)) << late.message();

  ASSERT_TRUE(resetDevice());
  EXPECT_TRUE(runOn(**negate, "negate"));
  EXPECT_TRUE(runOn(**twice, "twice"));
  EXPECT_TRUE(compileUncached(kSpec));
}

TEST(FakeDriverFault, ARefusedLaunchIsReportedByTheLaunch) {
  std::string why;
  if (!fakeDriver(&why))
    GTEST_SKIP() << why;
  auto twice = compileUncached(kSpec);
  ASSERT_TRUE(twice) << twice.message();
  Status s;
  {
    FakeMode refuse("launch");
    s = runOn(**twice, "twice");
  }
  ASSERT_FALSE(s);
  EXPECT_TRUE(contains(s.message(), "launching kernel twice_kernel failed: an illegal memory "
                                    "access was encountered"))
      << s.message();
  ASSERT_TRUE(resetDevice());
  EXPECT_TRUE(runOn(**twice, "twice"));
}

TEST(FakeDriverFault, OutOfMemoryAndRejectedPTXLeaveOtherModulesUsable) {
  std::string why;
  if (!fakeDriver(&why))
    GTEST_SKIP() << why;
  auto twice = compileUncached(kSpec);
  ASSERT_TRUE(twice) << twice.message();
  Status s;
  {
    FakeMode oom("oom");
    s = runOn(**twice, "twice");
  }
  EXPECT_EQ(s.message(),
            "allocating 400 bytes of device memory for %x: out of memory (CUDA_ERROR_OUT_OF_MEMORY)");
  EXPECT_TRUE(runOn(**twice, "twice"));

  auto rejected = [] {
    FakeMode badPtx("bad-ptx");
    return compileUncached(kOther);
  }();
  ASSERT_FALSE(rejected);
  EXPECT_TRUE(contains(rejected.message(), "the CUDA driver could not load the PTX: a PTX JIT "
                                           "compilation failed (CUDA_ERROR_INVALID_PTX)"))
      << rejected.message();
  EXPECT_TRUE(runOn(**twice, "twice"));
}

} // namespace
