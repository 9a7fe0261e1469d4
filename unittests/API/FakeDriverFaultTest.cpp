//===- FakeDriverFaultTest.cpp - GPU failures against the stand-in driver -===//
//
// The failure paths of GpuFaultTest.cpp on machines without a GPU: CTest
// runs this binary with the stand-in libcuda.so.1 (test/stubs/FakeCuda.cpp)
// first on the library path, and $NERVE_FAKE_CUDA set per step picks the
// failure. Its kernels compute nothing, so these tests check statuses, not
// results (GpuFaultTest does those on a GPU).
//
//===----------------------------------------------------------------------===//

#include "NewProcess.h"
#include "ScratchDir.h"
#include "nerve/Runtime/CudaDriver.h"
#include "nerve/nerve.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <vector>

using namespace nerve;
using nerve::testing::contains;
using nerve::testing::expectInNewProcess;
using nerve::testing::Problems;

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

/// Every test runs against the stand-in driver only (test/stubs/
/// FakeCuda.cpp); with no driver or a real GPU it is skipped, saying why.
class FakeDriverFault : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why;
    if (!cudaAvailable(&why))
      GTEST_SKIP() << why;
    if ((*cuda::Device::get())->name() != "nerve fake GPU")
      GTEST_SKIP() << "a real GPU is here (GpuFaultTest covers it)";
  }
};

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

TEST_F(FakeDriverFault, AFaultLosesCUDAForTheProcessAndCPUModulesGoOn) {
  expectInNewProcess([] {
    Problems p;
    auto twice = compileUncached(kSpec);
    auto negate = compileUncached(kOther);
    CompileOptions cpu;
    cpu.target = Target::CPU;
    auto onCPU = compile(kSpec, cpu);
    if (!twice || !negate || !onCPU)
      return std::string("compiling failed");
    p.expect(runOn(**twice, "twice").ok(), "the first run failed");

    Status s;
    {
      FakeMode fault("fault");
      s = runOn(**twice, "twice");
    }
    p.expect(s.message() ==
                 "running kernel @twice on the GPU: an illegal memory access was encountered "
                 "(CUDA_ERROR_ILLEGAL_ADDRESS); CUDA cannot be used any more in this process (a "
                 "kernel fault is not recoverable): restart it",
             "the fault said: " + s.message());

    // The other module, a launch on caller buffers and a new compile all
    // refuse, naming the fault.
    const std::string lost =
        "the GPU cannot run kernels after an earlier fault (running kernel @twice on the GPU: "
        "an illegal memory access was encountered (CUDA_ERROR_ILLEGAL_ADDRESS)); CUDA needs a "
        "new process to use the GPU again";
    s = runOn(**negate, "negate");
    p.expect(s.message() == lost, "a run after the fault said: " + s.message());
    float buffer[4];
    s = (*negate)->launch("negate", {Arg::tensor(buffer, {4}), Arg::tensor(buffer, {4})});
    p.expect(s.message() == lost, "a launch after the fault said: " + s.message());
    auto late = compileUncached(kSpec);
    p.expect(!late, "a compile after the fault succeeded");
    if (!late)
      p.expectContains(late.message(), lost);

    // CPU modules are not touched.
    std::vector<float> x = {1, 2, 3}, y(3);
    s = (*onCPU)->run("twice", {Arg::tensor(x.data(), {3}), Arg::tensor(y.data(), {3})});
    p.expect(s.ok() && y == std::vector<float>{2, 4, 6}, "the CPU module did not run");
    return p.text();
  });
}

TEST_F(FakeDriverFault, ARefusedLaunchIsReportedByTheLaunch) {
  expectInNewProcess([] {
    Problems p;
    auto twice = compileUncached(kSpec);
    if (!twice)
      return twice.message();
    FakeMode refuse("launch");
    Status s = runOn(**twice, "twice");
    p.expect(!s, "the refused launch succeeded");
    p.expectContains(s.message(), "launching kernel twice_kernel failed: an illegal memory "
                                  "access was encountered (CUDA_ERROR_ILLEGAL_ADDRESS); CUDA "
                                  "cannot be used any more in this process");
    return p.text();
  });
}

TEST_F(FakeDriverFault, OutOfMemoryAndRejectedPTXLeaveOtherModulesUsable) {
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

/// softmax over the rows of an f32 matrix: a row program.
const char *kRowSoftmax = R"(
!m = !tdim.tensor<[r: ?, c: ?], f32>
tdim.kernel @softmax(%x: !m) -> (%y: !m) {
  tdim.softmax ins(%x : !m) outs(%y : !m) over c
  tdim.return
}
)";

/// kRowSoftmax's module run on a `rows` x `cols` matrix of ones, in the
/// stand-in driver's `fakeMode` when one is given.
Status runRowSoftmax(Module &module, int64_t rows, int64_t cols,
                     const char *fakeMode = nullptr) {
  std::optional<FakeMode> mode;
  if (fakeMode)
    mode.emplace(fakeMode);
  std::vector<float> x(rows * cols, 1.0f), y(x.size());
  return module.run("softmax", {Arg::tensor(x.data(), {rows, cols}),
                                Arg::tensor(y.data(), {rows, cols})});
}

/// One of the stand-in driver's counters (`symbol`), or -1 without it.
int fakeCounter(const char *symbol) {
  void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  auto count = driver ? reinterpret_cast<int (*)()>(dlsym(driver, symbol)) : nullptr;
  return count ? count() : -1;
}

/// How many modules the stand-in driver has loaded in this process.
int fakeModulesLoaded() { return fakeCounter("nerveFakeModulesLoaded"); }

TEST_F(FakeDriverFault, KernelsLoadAtTheirFirstLaunch) {
  int before = fakeModulesLoaded();
  ASSERT_GE(before, 0) << "the stand-in driver does not count its modules";
  auto module = compileUncached(kRowSoftmax);
  ASSERT_TRUE(module) << module.message();
  // softmax is a dozen kernels; compile loads the first only.
  EXPECT_EQ(fakeModulesLoaded() - before, 1);
  // Rows of 1024 f32 run one of them (64 threads a block), loaded once.
  Status s = runRowSoftmax(**module, 2, 1024);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(fakeModulesLoaded() - before, 2);
  s = runRowSoftmax(**module, 3, 1024);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(fakeModulesLoaded() - before, 2);
}

/// kRowSoftmax compiled without caches, each kernel's PTX generated at its
/// first launch.
Result<std::shared_ptr<Module>> compileLazily(const char *spec) {
  CompileOptions o;
  o.target = Target::CUDA;
  o.cache = false;
  o.lazyKernels = true;
  return compile(spec, o);
}

TEST_F(FakeDriverFault, LazyKernelsGenerateThePTXAnEagerCompileDoes) {
  auto eager = compileUncached(kRowSoftmax);
  auto lazy = compileLazily(kRowSoftmax);
  ASSERT_TRUE(eager) << eager.message();
  ASSERT_TRUE(lazy) << lazy.message();
  // ptx() generates the deferred modules: every kernel, byte for byte.
  EXPECT_FALSE((*eager)->ptx().empty());
  EXPECT_EQ((*lazy)->ptx(), (*eager)->ptx());
  // The compile kept the device code for later and said so; it generated
  // no PTX itself (the background threads do, and a launch waits for its
  // module).
  bool kept = false, generated = false;
  for (const auto &[stage, ms] : (*lazy)->compileTimes()) {
    kept |= stage == "device code kept for its first launch";
    generated |= stage.find("(beside the host code)") != std::string::npos ||
                 stage.find("generated at its load") != std::string::npos;
  }
  EXPECT_TRUE(kept);
  EXPECT_FALSE(generated);
}

TEST_F(FakeDriverFault, LazyKernelsAreGeneratedAtTheirFirstLaunch) {
  int before = fakeModulesLoaded();
  ASSERT_GE(before, 0) << "the stand-in driver does not count its modules";
  auto module = compileLazily(kRowSoftmax);
  ASSERT_TRUE(module) << module.message();
  // Nothing loaded: the first module's PTX is not generated for the driver
  // to check, as an eager compile's is.
  EXPECT_EQ(fakeModulesLoaded() - before, 0);
  // The kernel for rows of 1024 f32: loaded at its launch, once.
  Status s = runRowSoftmax(**module, 2, 1024);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(fakeModulesLoaded() - before, 1);
  s = runRowSoftmax(**module, 3, 1024);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(fakeModulesLoaded() - before, 1);
  // A module dropped while its kernels are still being generated in the
  // background leaves nothing behind that a later compile trips on.
  for (int i = 0; i < 3; ++i) {
    auto dropped = compileLazily(kRowSoftmax);
    ASSERT_TRUE(dropped) << dropped.message();
  }
  auto after = compileLazily(kRowSoftmax);
  ASSERT_TRUE(after) << after.message();
  s = runRowSoftmax(**after, 2, 1024);
  EXPECT_TRUE(s) << s.message();
}

TEST_F(FakeDriverFault, LazyKernelsComeBackFromTheDiskCache) {
  ScratchDir scratch("nerve-fake-driver-lazy");
  ASSERT_FALSE(scratch.path.empty());
  CompileOptions o;
  o.target = Target::CUDA;
  o.cacheDir = scratch.path.string();
  o.lazyKernels = true;
  clearMemoryCache();
  auto cold = compile(kRowSoftmax, o);
  ASSERT_TRUE(cold) << cold.message();
  std::string ptx = (*cold)->ptx();
  // Once the background threads have generated every kernel, the entry is
  // stored again with their PTX: a later compile loads PTX, and the first
  // module at once, as after an eager compile.
  waitForBackgroundKernels();
  clearMemoryCache();
  int before = fakeModulesLoaded();
  auto warm = compile(kRowSoftmax, o);
  ASSERT_TRUE(warm) << warm.message();
  EXPECT_EQ(fakeModulesLoaded() - before, 1);
  bool loadedAtOnce = false;
  for (const auto &[stage, ms] : (*warm)->compileTimes())
    loadedAtOnce |= stage.rfind("load module", 0) == 0;
  EXPECT_TRUE(loadedAtOnce);
  Status s = runRowSoftmax(**warm, 2, 1024);
  EXPECT_TRUE(s) << s.message();
  EXPECT_EQ((*warm)->ptx(), ptx);
  // An eager compile of the same spec is another entry, not this one.
  o.lazyKernels = false;
  clearMemoryCache();
  CacheStats stats = cacheStats();
  auto eager = compile(kRowSoftmax, o);
  ASSERT_TRUE(eager) << eager.message();
  EXPECT_EQ(cacheStats().misses - stats.misses, 1u);
}

/// How many launches the stand-in driver was asked to let overlap the
/// kernel before (programmatic dependent launch).
int fakeDependentLaunches() { return fakeCounter("nerveFakeDependentLaunches"); }

TEST_F(FakeDriverFault, ScratchComesFromAPoolThatKeepsIt) {
  int before = fakeCounter("nerveFakePoolAllocations");
  ASSERT_GE(before, 0) << "the stand-in driver does not count pool allocations";
  // softmax's row statistics are scratch (a max and a sum a row), taken in
  // stream order from nerve's own pool, which synchronizations do not trim
  // (the device's default pool would give its memory back at each one).
  auto module = compileUncached(kRowSoftmax);
  ASSERT_TRUE(module) << module.message();
  Status s = runRowSoftmax(**module, 2, 1024);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(fakeCounter("nerveFakePoolAllocations") - before, 2);
  EXPECT_EQ(fakeCounter("nerveFakePoolKeepsAll"), 1);
}

TEST_F(FakeDriverFault, AWarmStartLinksThePTXItStoredOnce) {
  ScratchDir scratch("nerve-fake-driver-cache");
  ASSERT_FALSE(scratch.path.empty());
  const std::filesystem::path &dir = scratch.path;
  CompileOptions o;
  o.target = Target::CUDA;
  o.cacheDir = dir.string();
  clearMemoryCache();
  auto cold = compile(kRowSoftmax, o);
  ASSERT_TRUE(cold) << cold.message();
  // The PTX was generated beside the host code, and the times say so.
  bool sawHost = false, sawDevice = false;
  for (const auto &[stage, ms] : (*cold)->compileTimes()) {
    sawHost |= stage == "host code generation";
    sawDevice |= stage == "nerve-serialize-gpu-modules (beside the host code)";
  }
  EXPECT_TRUE(sawHost);
  EXPECT_TRUE(sawDevice);
  clearMemoryCache();
  CacheStats before = cacheStats();
  auto warm = compile(kRowSoftmax, o);
  ASSERT_TRUE(warm) << warm.message();
  EXPECT_EQ(cacheStats().diskHits - before.diskHits, 1u);
  EXPECT_EQ((*warm)->ptx(), (*cold)->ptx());
  // The host code finds each kernel's PTX where the entry keeps it (the
  // stand-in driver refuses text without the kernel it is asked for).
  Status s = runRowSoftmax(**warm, 2, 1024);
  EXPECT_TRUE(s) << s.message();

  // The entry holds the PTX once: the host object refers to it.
  std::vector<std::filesystem::path> files;
  for (const auto &e : std::filesystem::directory_iterator(dir))
    files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  std::ifstream in(files[0], std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t copies = 0;
  for (size_t at = bytes.find(".entry softmax_kernel("); at != std::string::npos;
       at = bytes.find(".entry softmax_kernel(", at + 1))
    ++copies;
  EXPECT_EQ(copies, 1u);
}

/// The optimization level the stand-in driver last compiled PTX at.
int fakeJITOptimizationLevel() { return fakeCounter("nerveFakeLastJITOptimizationLevel"); }

TEST_F(FakeDriverFault, PTXIsCompiledAtTheLevelItWasGeneratedFor) {
  // The host code, generated while the PTX is, loads each kernel at the
  // spec's optimization level (CU_JIT_OPTIMIZATION_LEVEL is one more: -O4
  // for O3), compiled afresh and from the disk cache. Loaded at the
  // driver's default level, ptxas's, compute-heavy kernels ran 7-20%
  // slower on an H200.
  for (int level : {3, 1}) {
    SCOPED_TRACE("opt level " + std::to_string(level));
    ScratchDir scratch("nerve-fake-driver-cache");
    ASSERT_FALSE(scratch.path.empty());
    CompileOptions o;
    o.target = Target::CUDA;
    o.cacheDir = scratch.path.string();
    o.optLevel = level;
    for (const char *from : {"a fresh compile", "the disk cache"}) {
      SCOPED_TRACE(from);
      clearMemoryCache();
      auto module = compile(kRowSoftmax, o);
      ASSERT_TRUE(module) << module.message();
      Status s = runRowSoftmax(**module, 2, 1024);
      ASSERT_TRUE(s) << s.message();
      EXPECT_EQ(fakeJITOptimizationLevel(), level + 1);
    }
  }
}

TEST_F(FakeDriverFault, KernelsForSm90OverlapTheKernelBefore) {
  int before = fakeDependentLaunches();
  ASSERT_GE(before, 0) << "the stand-in driver does not count dependent launches";
  // Compiled for sm_90 (the default), its kernels are launched as ones
  // that may overlap the kernel before them (their PTX begins with
  // griddepcontrol).
  auto module = compileUncached(kRowSoftmax);
  ASSERT_TRUE(module) << module.message();
  Status s = runRowSoftmax(**module, 2, 1024);
  ASSERT_TRUE(s) << s.message();
  int afterSm90 = fakeDependentLaunches();
  EXPECT_GT(afterSm90, before);
  // Compiled for sm_80 (no programmatic dependent launch): plain launches.
  CompileOptions o;
  o.target = Target::CUDA;
  o.cache = false;
  o.chip = "sm_80";
  auto older = compile(kRowSoftmax, o);
  ASSERT_TRUE(older) << older.message();
  s = runRowSoftmax(**older, 2, 1024);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(fakeDependentLaunches(), afterSm90);
}

TEST_F(FakeDriverFault, RowsStagedBeyond48KiBAskForTheSharedMemoryFirst) {
  auto module = compileUncached(kRowSoftmax);
  ASSERT_TRUE(module) << module.message();
  // 20000 f32 columns: 80000 bytes of staging a block (sm_90 allows 227 KiB;
  // under half of it: the vector kernel of 512 threads a block), launched
  // only after the kernel was allowed them (the stand-in driver refuses the
  // launch otherwise).
  Status small = runRowSoftmax(**module, 2, 20000, "small-shared");
  EXPECT_TRUE(contains(small.message(), "kernel softmax_kernel_"));
  EXPECT_TRUE(contains(small.message(),
                       " needs 80000 bytes of shared memory a block, more than this GPU allows "
                       "(was it compiled for another chip?): invalid argument "
                       "(CUDA_ERROR_INVALID_VALUE)"))
      << small.message();
  Status s = runRowSoftmax(**module, 2, 20000);
  EXPECT_TRUE(s) << s.message();
}

TEST_F(FakeDriverFault, StaticAndDynamicSharedMemoryCountTogether) {
  auto module = compileUncached(kRowSoftmax);
  ASSERT_TRUE(module) << module.message();
  // 98304 f32 columns take a cluster of 8 blocks, each staging 12288
  // columns: exactly 48 KiB of dynamic shared memory, which with the
  // kernel's static scratch is more than a block gets without asking (the
  // stand-in driver counts the `.shared` arrays of its PTX).
  Status s = runRowSoftmax(**module, 2, 98304);
  EXPECT_TRUE(s) << s.message();
}

TEST_F(FakeDriverFault, RowsTooWideForABlockLaunchInClusters) {
  auto module = compileUncached(kRowSoftmax);
  ASSERT_TRUE(module) << module.message();
  // 65536 f32 columns (256 KiB) are split over a cluster of 8 blocks on
  // sm_90: the stand-in driver checks that the grid is a whole number of
  // clusters of at most 8, and in mode "no-clusters" refuses them. The
  // message says what the launch asked for (the stand-in GPU is an sm_90,
  // so it does not blame the chip).
  Status s = runRowSoftmax(**module, 3, 65536);
  EXPECT_TRUE(s) << s.message();
  Status refused = runRowSoftmax(**module, 3, 65536, "no-clusters");
  EXPECT_TRUE(contains(refused.message(),
                       "launching kernel softmax_kernel in clusters of 8 blocks (256 threads and "
                       "32768 bytes of dynamic shared memory each) failed: "))
      << refused.message();
  EXPECT_FALSE(contains(refused.message(), "sm_90 or later")) << refused.message();
}

} // namespace
