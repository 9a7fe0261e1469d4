//===- GpuFaultTest.cpp - GPU failures through the API, and going on ------===//
//
// On a real GPU: a kernel that faults, PTX the driver rejects, device
// memory running out. Each is reported as a Status naming what failed.
// After rejected PTX or a failed allocation the caller goes on with the
// same and other modules; a fault loses CUDA for the process (the driver
// allows no recovery), so every later CUDA call says so while CPU modules
// go on. Skipped where no GPU is present; the same paths run on every
// machine against the stand-in driver (FakeDriverFaultTest.cpp).
//
//===----------------------------------------------------------------------===//

#include "NewProcess.h"
#include "nerve/Runtime/CudaDriver.h"
#include "nerve/nerve.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

using namespace nerve;
using nerve::testing::contains;
using nerve::testing::expectInNewProcess;
using nerve::testing::Problems;

namespace {

const char *kScale = R"(
!v = !tdim.tensor<[n: ?], f32>
tdim.kernel @scale(%x: !v, %a: f32) -> (%y: !v) {
  tdim.map ins(%x : !v) outs(%y : !v) {
  ^bb0(%p: f32):
    %r = arith.mulf %a, %p : f32
    tdim.yield %r : f32
  }
  tdim.return
}
)";

const char *kShift = R"(
!v = !tdim.tensor<[n: ?], f32>
tdim.kernel @shift(%x: !v, %a: f32) -> (%y: !v) {
  tdim.map ins(%x : !v) outs(%y : !v) {
  ^bb0(%p: f32):
    %r = arith.addf %a, %p : f32
    tdim.yield %r : f32
  }
  tdim.return
}
)";

CompileOptions cudaOptions() {
  CompileOptions o;
  o.target = Target::CUDA;
  return o;
}

/// Runs `entry` (y = f(x, 3)) on host arrays and checks every element.
void expectRuns(const Module &m, const std::string &entry, float (*f)(float, float)) {
  const int64_t n = 4099;
  std::vector<float> x(n), y(n, -1.0f);
  for (int64_t i = 0; i < n; ++i)
    x[i] = static_cast<float>(i % 13) - 6;
  Status s = m.run(entry, {Arg::tensor(x.data(), {n}), Arg::scalar(3), Arg::tensor(y.data(), {n})});
  ASSERT_TRUE(s) << s.message();
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(y[i], f(x[i], 3.0f)) << entry << ", element " << i;
}

float plus(float x, float a) { return a + x; }

/// Whether a real GPU (not the stand-in driver) is here.
bool realGPU(std::string *why) {
  if (!cudaAvailable(why))
    return false;
  if ((*cuda::Device::get())->name() == "nerve fake GPU") {
    *why = "the stand-in driver is loaded";
    return false;
  }
  return true;
}

TEST(GpuFault, AFaultingKernelIsReportedAndLaterCallsSaySo) {
  std::string why;
  if (!realGPU(&why))
    GTEST_SKIP() << why;
  expectInNewProcess([] {
    Problems p;
    auto scale = compile(kScale, cudaOptions());
    auto shift = compile(kShift, cudaOptions());
    CompileOptions cpu;
    cpu.target = Target::CPU;
    auto onCPU = compile(kShift, cpu);
    if (!scale || !shift || !onCPU)
      return std::string("compiling failed");

    // Device pointers that point nowhere: the launch is accepted, the
    // kernel faults, and the next synchronisation (the next run) reports it.
    const int64_t n = 1 << 20;
    void *nowhere = reinterpret_cast<void *>(uintptr_t(1) << 46);
    Status s = (*scale)->launch(
        "scale", {Arg::tensor(nowhere, {n}), Arg::scalar(2), Arg::tensor(nowhere, {n})});
    p.expect(s.ok(), "the launch was refused: " + s.message());
    std::vector<float> x(16, 1.0f), y(16);
    s = (*scale)->run("scale", {Arg::tensor(x.data(), {16}), Arg::scalar(2),
                                Arg::tensor(y.data(), {16})});
    p.expect(!s, "the run after the fault succeeded");
    p.expectContains(s.message(), "CUDA_ERROR_ILLEGAL_ADDRESS");
    p.expectContains(s.message(), "CUDA cannot be used any more in this process");

    // Every other CUDA module refuses, naming the fault...
    s = (*shift)->run("shift", {Arg::tensor(x.data(), {16}), Arg::scalar(2),
                                Arg::tensor(y.data(), {16})});
    p.expectContains(s.message(), "the GPU cannot run kernels after an earlier fault");
    p.expectContains(s.message(), "CUDA needs a new process");
    // ...while CPU modules run, and the process exits cleanly.
    s = (*onCPU)->run("shift", {Arg::tensor(x.data(), {16}), Arg::scalar(2),
                                Arg::tensor(y.data(), {16})});
    p.expect(s.ok() && y[15] == 3.0f, "the CPU module did not run: " + s.message());
    return p.text();
  });
}

TEST(GpuFault, PTXTheDriverRejectsIsAnErrorAndOtherModulesRun) {
  std::string why;
  if (!realGPU(&why))
    GTEST_SKIP() << why;
  if ((*cuda::Device::get())->computeCapability() >= 100)
    GTEST_SKIP() << "this GPU runs sm_100 code";
  CompileOptions tooNew = cudaOptions();
  tooNew.chip = "sm_100"; // this GPU is older: the driver cannot JIT it
  tooNew.cache = false;
  auto rejected = compile(kScale, tooNew);
  ASSERT_FALSE(rejected);
  EXPECT_TRUE(contains(rejected.message(), "the CUDA driver could not load the PTX"))
      << rejected.message();
  auto fine = compile(kShift, cudaOptions());
  ASSERT_TRUE(fine) << fine.message();
  expectRuns(**fine, "shift", plus);
}

TEST(GpuFault, RunningOutOfDeviceMemoryIsAnErrorAndTheNextRunWorks) {
  std::string why;
  if (!realGPU(&why))
    GTEST_SKIP() << why;
  auto scale = compile(kScale, cudaOptions());
  ASSERT_TRUE(scale) << scale.message();
  cuda::Device *device = *cuda::Device::get();
  ASSERT_TRUE(device->makeCurrent());
  const cuda::DriverAPI &api = device->api();
  // Take all but 64 MiB of what is free, then ask for 3 x 128 MiB.
  size_t freeBytes = 0, totalBytes = 0;
  ASSERT_EQ(api.cuMemGetInfo(&freeBytes, &totalBytes), 0);
  cuda::CUdeviceptr hog = 0;
  size_t hogBytes = freeBytes - (size_t(64) << 20);
  while (api.cuMemAlloc(&hog, hogBytes) != 0 && hogBytes > (size_t(1) << 30))
    hogBytes -= size_t(256) << 20; // the free figure includes what cannot be had
  ASSERT_NE(hog, 0u);
  const int64_t n = int64_t(32) << 20;
  std::vector<float> x(n, 1.5f), y(n, 0.0f);
  Status s = (*scale)->run("scale", {Arg::tensor(x.data(), {n}), Arg::scalar(2),
                                     Arg::tensor(y.data(), {n})});
  api.cuMemFree(hog);
  ASSERT_FALSE(s);
  EXPECT_TRUE(contains(s.message(), "bytes of device memory for %")) << s.message();
  EXPECT_TRUE(contains(s.message(), "CUDA_ERROR_OUT_OF_MEMORY")) << s.message();
  // Nothing was lost: the same module runs once memory is back.
  s = (*scale)->run("scale", {Arg::tensor(x.data(), {n}), Arg::scalar(2),
                              Arg::tensor(y.data(), {n})});
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(y.front(), 3.0f);
  EXPECT_EQ(y.back(), 3.0f);
}

} // namespace
