//===- CAPITest.cpp - nerve's C API, through libnerve.so -----------------===//
//
// The binary links the shared library, so these tests also check that the C
// functions are exported. They compile for the CPU (a CUDA launch is tested
// when a GPU is present), check what entries report, launch on host arrays
// and compare with values computed here, and check every error path that C
// callers can reach.
//
//===----------------------------------------------------------------------===//

#include "nerve-c/nerve.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

NerveStringRef ref(const std::string &s) { return nerveStringRefCreate(s.data(), s.size()); }
std::string str(NerveStringRef s) { return std::string(s.data, s.length); }

/// The message of `status` (destroying it); empty for success.
std::string take(NerveStatus status) {
  std::string message = str(nerveStatusGetMessage(status));
  nerveStatusDestroy(status);
  return message;
}

void collect(NerveStringRef text, void *userData) {
  static_cast<std::string *>(userData)->assign(text.data, text.length);
}

const std::string kScaleSpec = R"(
!m = !tdim.tensor<[r: ?, c: ?], f32>
tdim.kernel @scale(%x: !m, %k: f32) -> (%y: !m) {
  tdim.map ins(%x : !m) outs(%y : !m) {
  ^bb0(%a: f32):
    %v = arith.mulf %a, %k : f32
    tdim.yield %v : f32
  }
  tdim.return
}
)";

/// CPU options; the caller destroys them.
NerveCompileOptions cpuOptions() {
  NerveCompileOptions o = nerveCompileOptionsCreate();
  nerveCompileOptionsSetTarget(o, NerveTargetCPU);
  return o;
}

/// A CPU module of `spec`, or a failed test.
NerveModule compileCPU(const std::string &spec) {
  NerveCompileOptions o = cpuOptions();
  NerveModule m{nullptr};
  std::string message = take(nerveCompile(ref(spec), o, &m));
  nerveCompileOptionsDestroy(o);
  EXPECT_EQ(message, "");
  return m;
}

NerveArgValue tensor(void *data, const std::vector<int64_t> &sizes,
                     const std::vector<int64_t> *strides = nullptr) {
  NerveArgValue v{};
  v.kind = NerveArgKindTensor;
  v.rank = static_cast<int32_t>(sizes.size());
  v.data = data;
  v.sizes = sizes.data();
  v.strides = strides ? strides->data() : nullptr;
  return v;
}

NerveArgValue scalar(double x) {
  NerveArgValue v{};
  v.kind = NerveArgKindFloat;
  v.floatValue = x;
  return v;
}

TEST(CAPI, Versions) {
  EXPECT_EQ(nerveGetCAPIVersion(), NERVE_C_API_VERSION);
  EXPECT_NE(str(nerveGetVersion()).find("nerve"), std::string::npos);
}

TEST(CAPI, DescribesEntriesAndArguments) {
  NerveModule m = compileCPU(kScaleSpec);
  ASSERT_NE(m.ptr, nullptr);
  EXPECT_EQ(nerveModuleGetTarget(m), NerveTargetCPU);
  ASSERT_EQ(nerveModuleGetNumEntries(m), 1);
  NerveEntry e = nerveModuleGetEntry(m, 0);
  EXPECT_EQ(str(nerveEntryGetName(e)), "scale");
  EXPECT_EQ(nerveModuleLookupEntry(m, ref("scale")).ptr, e.ptr);
  EXPECT_TRUE(nerveEntryIsNull(nerveModuleLookupEntry(m, ref("nope"))));
  EXPECT_TRUE(nerveEntryIsNull(nerveModuleGetEntry(m, 1)));
  ASSERT_EQ(nerveEntryGetNumArgs(e), 3);
  EXPECT_EQ(nerveEntryGetNumVariableDims(e), 0);

  NerveArgInfo x = nerveEntryGetArg(e, 0), k = nerveEntryGetArg(e, 1), y = nerveEntryGetArg(e, 2);
  EXPECT_EQ(str(nerveArgInfoGetName(x)), "x");
  EXPECT_TRUE(nerveArgInfoIsTensor(x));
  EXPECT_FALSE(nerveArgInfoIsOutput(x));
  EXPECT_EQ(nerveArgInfoGetDType(x), NerveDTypeF32);
  ASSERT_EQ(nerveArgInfoGetRank(x), 2);
  EXPECT_EQ(str(nerveArgInfoGetDimName(x, 0)), "r");
  EXPECT_EQ(str(nerveArgInfoGetDimName(x, 1)), "c");
  EXPECT_EQ(nerveArgInfoGetStaticSize(x, 0), -1);
  EXPECT_FALSE(nerveArgInfoHasStrides(x));
  EXPECT_EQ(nerveArgInfoGetOffset(x), 0);
  EXPECT_EQ(str(nerveArgInfoGetName(k)), "k");
  EXPECT_FALSE(nerveArgInfoIsTensor(k));
  EXPECT_EQ(nerveArgInfoGetRank(k), 0);
  EXPECT_TRUE(nerveArgInfoIsOutput(y));
  EXPECT_EQ(str(nerveModuleGetPTX(m)), "");
  EXPECT_NE(str(nerveModuleGetLLVMIR(m)).find("scale"), std::string::npos);
  ASSERT_GT(nerveModuleGetNumCompileTimes(m), 0);
  NerveStringRef stage{};
  double ms = -1;
  nerveModuleGetCompileTime(m, 0, &stage, &ms);
  EXPECT_GT(stage.length, 0u);
  EXPECT_GE(ms, 0.0);
  nerveModuleDestroy(m);
}

TEST(CAPI, StaticSizesEntryAndSpecialization) {
  NerveCompileOptions o = cpuOptions();
  nerveCompileOptionsSetStaticSize(o, ref("r"), 5);
  nerveCompileOptionsSetStaticSize(o, ref("r"), 2); // replaces the 5
  nerveCompileOptionsSetEntry(o, ref("scale"));
  NerveModule m{nullptr};
  ASSERT_EQ(take(nerveCompile(ref(kScaleSpec), o, &m)), "");
  NerveArgInfo x = nerveEntryGetArg(nerveModuleGetEntry(m, 0), 0);
  EXPECT_EQ(nerveArgInfoGetStaticSize(x, 0), 2);
  EXPECT_EQ(nerveArgInfoGetStaticSize(x, 1), -1);
  nerveModuleDestroy(m);

  nerveCompileOptionsSetEntry(o, ref("nope"));
  EXPECT_EQ(take(nerveCompile(ref(kScaleSpec), o, &m)), "the spec has no kernel @nope to compile");

  NerveCompileOptions special = cpuOptions();
  nerveCompileOptionsSetSpecializeSizes(special, true);
  ASSERT_EQ(take(nerveCompile(ref(kScaleSpec), special, &m)), "");
  NerveEntry e = nerveModuleLookupEntry(m, ref("scale"));
  std::vector<float> in = {1, 2, 3}, out(3, 0);
  std::vector<int64_t> sizes = {1, 3};
  NerveArgValue args[] = {tensor(in.data(), sizes), scalar(2.0), tensor(out.data(), sizes)};
  EXPECT_EQ(take(nerveEntryRun(m, e, args, 3)), "");
  EXPECT_EQ(out, (std::vector<float>{2, 4, 6}));
  nerveModuleDestroy(m);
  nerveCompileOptionsDestroy(special);
  nerveCompileOptionsDestroy(o);
}

TEST(CAPI, LaunchesOnHostArrays) {
  NerveModule m = compileCPU(kScaleSpec);
  ASSERT_NE(m.ptr, nullptr);
  NerveEntry e = nerveModuleLookupEntry(m, ref("scale"));
  std::vector<float> x = {1, 2, 3, 4, 5, 6}, y(6, -1);
  std::vector<int64_t> sizes = {2, 3};
  NerveArgValue args[] = {tensor(x.data(), sizes), scalar(2.5), tensor(y.data(), sizes)};
  EXPECT_EQ(take(nerveEntryLaunch(m, e, args, 3, nullptr)), "");
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(y[i], x[i] * 2.5f);
  // run() is launch() and a wait on the CPU.
  std::fill(y.begin(), y.end(), -1.f);
  EXPECT_EQ(take(nerveEntryRun(m, e, args, 3)), "");
  EXPECT_EQ(y[5], 15.f);
  nerveModuleDestroy(m);
}

TEST(CAPI, LaunchErrorsNameTheArgument) {
  NerveModule m = compileCPU(kScaleSpec);
  ASSERT_NE(m.ptr, nullptr);
  NerveEntry e = nerveModuleLookupEntry(m, ref("scale"));
  std::vector<float> x(6), y(6), z(5);
  std::vector<int64_t> sizes = {2, 3}, wrong = {5}, other = {3, 2};
  NerveArgValue good[] = {tensor(x.data(), sizes), scalar(1), tensor(y.data(), sizes)};
  EXPECT_EQ(take(nerveEntryLaunch(m, e, good, 2, nullptr)),
            "kernel @scale takes 3 arguments but 2 were given");

  NerveArgValue rank[] = {tensor(x.data(), sizes), scalar(1), tensor(z.data(), wrong)};
  EXPECT_EQ(take(nerveEntryLaunch(m, e, rank, 3, nullptr)),
            "argument %y has 2 dimensions (r, c) but 1 sizes were given");

  NerveArgValue mismatch[] = {tensor(x.data(), sizes), scalar(1), tensor(y.data(), other)};
  EXPECT_NE(take(nerveEntryLaunch(m, e, mismatch, 3, nullptr)).find("dimension `r` has size 3"),
            std::string::npos);

  NerveArgValue scalarForTensor[] = {scalar(1), scalar(1), tensor(y.data(), sizes)};
  EXPECT_EQ(take(nerveEntryLaunch(m, e, scalarForTensor, 3, nullptr)),
            "argument %x is a tensor over (r, c) but a scalar was given");

  NerveArgValue badKind[] = {tensor(x.data(), sizes), scalar(1), tensor(y.data(), sizes)};
  badKind[1].kind = 7;
  EXPECT_EQ(take(nerveEntryLaunch(m, e, badKind, 3, nullptr)),
            "argument %k has an unknown kind 7");

  NerveArgValue noSizes[] = {tensor(x.data(), sizes), scalar(1), tensor(y.data(), sizes)};
  noSizes[0].sizes = nullptr;
  EXPECT_EQ(take(nerveEntryLaunch(m, e, noSizes, 3, nullptr)),
            "argument %x was given 2 sizes but no size array");

  EXPECT_EQ(take(nerveEntryLaunch(m, NerveEntry{nullptr}, good, 3, nullptr)),
            "no kernel was given (a null entry handle)");
  EXPECT_EQ(take(nerveEntryLaunch(NerveModule{nullptr}, e, good, 3, nullptr)),
            "no module was given (a null handle)");
  nerveModuleDestroy(m);
}

TEST(CAPI, LaunchPlansTakeOnlyDataPointers) {
  NerveModule m = compileCPU(kScaleSpec);
  ASSERT_NE(m.ptr, nullptr);
  NerveEntry e = nerveModuleLookupEntry(m, ref("scale"));
  std::vector<int64_t> sizes = {2, 3};
  // The data pointers are not read when the plan is made.
  NerveArgValue shape[] = {tensor(nullptr, sizes), scalar(3), tensor(nullptr, sizes)};
  NerveLaunchPlan plan{nullptr};
  ASSERT_EQ(take(nerveLaunchPlanCreate(m, e, shape, 3, &plan)), "");
  nerveModuleDestroy(m); // the plan holds its module
  EXPECT_EQ(nerveLaunchPlanGetNumTensors(plan), 2);
  std::vector<float> x = {1, 2, 3, 4, 5, 6}, y(6, -1), z(6, -1);
  void *first[] = {x.data(), y.data()}, *second[] = {y.data(), z.data()};
  EXPECT_EQ(take(nerveLaunchPlanLaunch(plan, first, 2, nullptr)), "");
  EXPECT_EQ(take(nerveLaunchPlanLaunch(plan, second, 2, nullptr)), "");
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(y[i], x[i] * 3);
    EXPECT_EQ(z[i], x[i] * 9);
  }
  EXPECT_EQ(take(nerveLaunchPlanLaunch(plan, first, 3, nullptr)),
            "kernel @scale takes 2 data pointers but 3 were given");
  void *null[] = {x.data(), nullptr};
  EXPECT_EQ(take(nerveLaunchPlanLaunch(plan, null, 2, nullptr)),
            "argument %y was given a null pointer");
  EXPECT_EQ(take(nerveLaunchPlanLaunch(NerveLaunchPlan{nullptr}, first, 2, nullptr)),
            "no launch plan was given (a null handle)");
  nerveLaunchPlanDestroy(plan);
}

TEST(CAPI, LaunchPlanErrorsNameTheArgument) {
  NerveModule m = compileCPU(kScaleSpec);
  ASSERT_NE(m.ptr, nullptr);
  NerveEntry e = nerveModuleLookupEntry(m, ref("scale"));
  std::vector<int64_t> sizes = {2, 3}, other = {3, 2};
  NerveArgValue mismatch[] = {tensor(nullptr, sizes), scalar(1), tensor(nullptr, other)};
  NerveLaunchPlan plan{nullptr};
  EXPECT_NE(take(nerveLaunchPlanCreate(m, e, mismatch, 3, &plan)).find("dimension `r` has size 3"),
            std::string::npos);
  EXPECT_EQ(plan.ptr, nullptr);
  EXPECT_EQ(take(nerveLaunchPlanCreate(m, e, mismatch, 3, nullptr)),
            "no place for the plan was given");
  EXPECT_EQ(take(nerveLaunchPlanCreate(NerveModule{nullptr}, e, mismatch, 3, &plan)),
            "no module was given (a null handle)");
  nerveModuleDestroy(m);
}

TEST(CAPI, CompileErrorsComeBackAsStatuses) {
  NerveCompileOptions o = cpuOptions();
  NerveModule m{nullptr};
  std::string message = take(nerveCompile(ref("tdim.kernel @k("), o, &m));
  EXPECT_NE(message.find("error"), std::string::npos) << message;
  EXPECT_EQ(m.ptr, nullptr);
  message = take(nerveCompileFile(ref("/nonexistent/spec.mlir"), o, &m));
  EXPECT_NE(message.find("/nonexistent/spec.mlir"), std::string::npos) << message;
  nerveCompileOptionsSetOptLevel(o, 9);
  EXPECT_EQ(take(nerveCompile(ref(kScaleSpec), o, &m)), "opt level 9 is out of range 0-3");
  nerveCompileOptionsDestroy(o);

  o = nerveCompileOptionsCreate();
  nerveCompileOptionsSetTarget(o, NerveTargetCUDA);
  nerveCompileOptionsSetChip(o, ref("sm_42"));
  // Without a GPU, the CUDA target fails for that reason first.
  message = take(nerveCompile(ref(kScaleSpec), o, &m));
  EXPECT_TRUE(message.find("sm_42") != std::string::npos ||
              message.find("the CUDA target needs a GPU") != std::string::npos)
      << message;
  nerveCompileOptionsDestroy(o);
  EXPECT_EQ(take(NerveStatus{nullptr}), "");
}

TEST(CAPI, OptionsReachTheCompiler) {
  NerveCompileOptions o = cpuOptions();
  nerveCompileOptionsSetSourceName(o, ref("my-spec.mlir"));
  nerveCompileOptionsSetCache(o, false);
  nerveCompileOptionsSetFastMath(o, true);
  nerveCompileOptionsSetNeuronTimeBlock(o, 4);
  nerveCompileOptionsSetLibdevice(o, ref("none"));
  nerveCompileOptionsSetCacheMaxBytes(o, 1 << 20);
  NerveModule m{nullptr};
  std::string message = take(nerveCompile(ref("tdim.kernel @k("), o, &m));
  EXPECT_NE(message.find("my-spec.mlir"), std::string::npos) << message;
  nerveCompileOptionsSetNeuronTimeBlock(o, 500);
  EXPECT_EQ(take(nerveCompile(ref(kScaleSpec), o, &m)),
            "neuron time block 500 is out of range 0-128 (0: automatic)");
  nerveCompileOptionsDestroy(o);
}

TEST(CAPI, FastAndExactMathExcludeEachOther) {
  NerveCompileOptions o = cpuOptions();
  nerveCompileOptionsSetCache(o, false);
  nerveCompileOptionsSetExactMath(o, true);
  NerveModule m{nullptr};
  ASSERT_EQ(take(nerveCompile(ref(kScaleSpec), o, &m)), "");
  nerveModuleDestroy(m);
  m = NerveModule{nullptr};
  nerveCompileOptionsSetFastMath(o, true);
  EXPECT_EQ(take(nerveCompile(ref(kScaleSpec), o, &m)),
            "fast math and exact math exclude each other: choose one");
  EXPECT_EQ(m.ptr, nullptr);
  nerveCompileOptionsDestroy(o);
}

TEST(CAPI, SpecializedLayoutsRunOnPermutedArrays) {
  // x is stored column-major (a transposed view): order [c, r], unit stride
  // innermost; y stays row-major.
  int32_t order[] = {1, 0};
  NerveArgLayout layouts[3] = {{order, 2, true}, {nullptr, 0, false}, {nullptr, 0, false}};
  std::string spec;
  EXPECT_EQ(take(nerveSpecializeLayouts(ref(kScaleSpec), ref("scale"), layouts, 3, collect,
                                        &spec)),
            "");
  EXPECT_NE(spec.find("!tdim.tensor<[c: ?, r: ?], f32, strides = [?, 1]>"), std::string::npos)
      << spec;
  NerveModule m = compileCPU(spec);
  ASSERT_NE(m.ptr, nullptr);
  NerveEntry e = nerveModuleLookupEntry(m, ref("scale"));
  NerveArgInfo x = nerveEntryGetArg(e, 0);
  EXPECT_EQ(str(nerveArgInfoGetDimName(x, 0)), "c");
  EXPECT_TRUE(nerveArgInfoHasStrides(x));
  EXPECT_EQ(nerveArgInfoGetStride(x, 0), -1);
  EXPECT_EQ(nerveArgInfoGetStride(x, 1), 1);

  // x[r][c] = 10 r + c stored at c * 2 + r (R = 2, C = 3).
  std::vector<float> xs(6), y(6, -1);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c)
      xs[c * 2 + r] = 10.f * r + c;
  std::vector<int64_t> xSizes = {3, 2}, xStrides = {2, 1}, ySizes = {2, 3};
  NerveArgValue args[] = {tensor(xs.data(), xSizes, &xStrides), scalar(2),
                          tensor(y.data(), ySizes)};
  EXPECT_EQ(take(nerveEntryLaunch(m, e, args, 3, nullptr)), "");
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c)
      EXPECT_EQ(y[r * 3 + c], 2.f * (10.f * r + c)) << r << "," << c;
  nerveModuleDestroy(m);
}

TEST(CAPI, LayoutErrorsNameTheArgument) {
  std::string spec;
  int32_t repeated[] = {0, 0}, one[] = {0};
  NerveArgLayout bad[3] = {{repeated, 2, true}, {nullptr, 0, false}, {nullptr, 0, false}};
  EXPECT_EQ(take(nerveSpecializeLayouts(ref(kScaleSpec), ref("scale"), bad, 3, collect, &spec)),
            "the layout of argument %x is not an order of its 2 dimensions (`r`, `c`)");
  NerveArgLayout shortOrder[3] = {{one, 1, true}, {nullptr, 0, false}, {nullptr, 0, false}};
  EXPECT_EQ(
      take(nerveSpecializeLayouts(ref(kScaleSpec), ref("scale"), shortOrder, 3, collect, &spec)),
      "the layout of argument %x lists 1 dimensions but the argument has 2 (`r`, `c`)");
  NerveArgLayout scalarLayout[3] = {{nullptr, 0, false}, {one, 1, true}, {nullptr, 0, false}};
  EXPECT_EQ(take(nerveSpecializeLayouts(ref(kScaleSpec), ref("scale"), scalarLayout, 3, collect,
                                        &spec)),
            "argument %k is a scalar: it has no layout");
  EXPECT_EQ(take(nerveSpecializeLayouts(ref(kScaleSpec), ref("other"), bad, 3, collect, &spec)),
            "the spec has no kernel @other");
  EXPECT_EQ(take(nerveSpecializeLayouts(ref(kScaleSpec), ref("scale"), bad, 2, collect, &spec)),
            "kernel @scale takes 3 arguments but 2 layouts were given");
}

TEST(CAPI, BuildersGiveSpecs) {
  std::string spec;
  EXPECT_EQ(take(nerveElementwiseSpec(ref("axpy"), ref("f32 x[n], f32 y[n], f32 a"),
                                      ref("f32 z[n]"), ref("z = a * x + y"), collect, &spec)),
            "");
  NerveModule m = compileCPU(spec);
  ASSERT_NE(m.ptr, nullptr);
  NerveEntry e = nerveModuleLookupEntry(m, ref("axpy"));
  ASSERT_FALSE(nerveEntryIsNull(e));
  std::vector<float> x = {1, 2, 3}, y = {10, 20, 30}, z(3);
  std::vector<int64_t> n = {3};
  NerveArgValue args[] = {tensor(x.data(), n), tensor(y.data(), n), scalar(2),
                          tensor(z.data(), n)};
  EXPECT_EQ(take(nerveEntryLaunch(m, e, args, 4, nullptr)), "");
  EXPECT_EQ(z, (std::vector<float>{12, 24, 36}));
  nerveModuleDestroy(m);

  // An empty post is the reduction's plain result.
  EXPECT_EQ(take(nerveReductionSpec(ref("total"), ref("f32 x[b, n]"), ref("f32 s[b]"),
                                    ref("x"), ref("a + b"), ref("0"), ref(""), collect, &spec)),
            "");
  m = compileCPU(spec);
  ASSERT_NE(m.ptr, nullptr);
  std::vector<float> xs = {1, 2, 3, 4, 5, 6}, s(2);
  std::vector<int64_t> bn = {2, 3}, b = {2};
  NerveArgValue rargs[] = {tensor(xs.data(), bn), tensor(s.data(), b)};
  EXPECT_EQ(take(nerveEntryLaunch(m, nerveModuleGetEntry(m, 0), rargs, 2, nullptr)), "");
  EXPECT_EQ(s, (std::vector<float>{6, 15}));
  nerveModuleDestroy(m);

  std::string message = take(nerveElementwiseSpec(ref("k"), ref("f32 x[n]"), ref("f32 y[n]"),
                                                  ref("y = x + q"), collect, &spec));
  EXPECT_NE(message.find("unknown name 'q'"), std::string::npos) << message;
  EXPECT_EQ(take(nerveElementwiseSpec(ref("k"), ref("f32 x[n]"), ref("f32 y[n]"), ref("y = x"),
                                      nullptr, nullptr)),
            "no callback was given to receive the result");
}

TEST(CAPI, CacheStatisticsAndControl) {
  // The binary's cache directory is a fresh one (TemporaryCacheDir).
  std::string dir;
  nerveCacheGetDirectory(NerveCompileOptions{nullptr}, collect, &dir);
  ASSERT_EQ(dir, std::getenv("NERVE_CACHE_DIR"));
  EXPECT_TRUE(nerveCacheIsDiskEnabled(NerveCompileOptions{nullptr}));
  NerveCompileOptions off = nerveCompileOptionsCreate();
  nerveCompileOptionsSetCache(off, false);
  EXPECT_FALSE(nerveCacheIsDiskEnabled(off));
  nerveCompileOptionsDestroy(off);

  // A kernel of its own: no other test compiled it.
  std::string spec = kScaleSpec;
  spec.replace(spec.find("@scale"), 6, "@cached_scale");
  NerveCacheStats before = nerveCacheGetStats();
  nerveModuleDestroy(compileCPU(spec));
  NerveCacheStats afterMiss = nerveCacheGetStats();
  EXPECT_EQ(afterMiss.misses, before.misses + 1);
  EXPECT_EQ(afterMiss.stores, before.stores + 1);
  nerveModuleDestroy(compileCPU(spec));
  EXPECT_EQ(nerveCacheGetStats().memoryHits, afterMiss.memoryHits + 1);

  nerveCacheClearMemory();
  nerveModuleDestroy(compileCPU(spec));
  EXPECT_EQ(nerveCacheGetStats().diskHits, afterMiss.diskHits + 1);

  int64_t removed = -1;
  EXPECT_EQ(take(nerveCacheClearDisk(NerveCompileOptions{nullptr}, &removed)), "");
  EXPECT_GE(removed, 1);
  EXPECT_EQ(take(nerveCacheClearDisk(NerveCompileOptions{nullptr}, &removed)), "");
  EXPECT_EQ(removed, 0);
  nerveCacheClearMemory();
  NerveCacheStats beforeRecompile = nerveCacheGetStats();
  nerveModuleDestroy(compileCPU(spec));
  EXPECT_EQ(nerveCacheGetStats().misses, beforeRecompile.misses + 1);
}

TEST(CAPI, ChipsForComputeCapabilities) {
  EXPECT_EQ(str(nerveChipForComputeCapability(90)), "sm_90");
  EXPECT_EQ(str(nerveChipForComputeCapability(86)), "sm_80");
  EXPECT_EQ(str(nerveChipForComputeCapability(120)), "sm_100");
  EXPECT_EQ(str(nerveChipForComputeCapability(75)), "");
}

TEST(CAPI, TheGPU) {
  NerveCudaDeviceInfo info{};
  std::string why = take(nerveCudaGetDevice(&info));
  EXPECT_NE(take(nerveCudaSelectDevice(-1)), "");
  if (!why.empty()) {
    // Without a GPU the status says why, and choosing one is still allowed
    // (nothing is open).
    EXPECT_EQ(take(nerveCudaSelectDevice(0)), "");
    GTEST_SKIP() << why;
  }
  EXPECT_GE(info.computeCapability, 50);
  EXPECT_GT(info.multiprocessors, 0);
  EXPECT_GT(std::string(info.name).size(), 0u);
  EXPECT_EQ(take(nerveCudaSelectDevice(info.ordinal)), "");
  EXPECT_NE(take(nerveCudaSelectDevice(info.ordinal + 1)).find("one GPU per process"),
            std::string::npos);

  NerveCompileOptions o = nerveCompileOptionsCreate();
  nerveCompileOptionsSetTarget(o, NerveTargetCUDA);
  const std::string chip = info.computeCapability >= 100 ? "sm_100" : "sm_90";
  nerveCompileOptionsSetChip(o, ref(chip));
  NerveModule m{nullptr};
  ASSERT_EQ(take(nerveCompile(ref(kScaleSpec), o, &m)), "");
  nerveCompileOptionsDestroy(o);
  EXPECT_EQ(nerveModuleGetTarget(m), NerveTargetCUDA);
  EXPECT_NE(str(nerveModuleGetPTX(m)).find(".entry"), std::string::npos);
  std::vector<float> x = {1, 2, 3, 4, 5, 6}, y(6, -1);
  std::vector<int64_t> sizes = {2, 3};
  NerveArgValue args[] = {tensor(x.data(), sizes), scalar(-2), tensor(y.data(), sizes)};
  EXPECT_EQ(take(nerveEntryRun(m, nerveModuleGetEntry(m, 0), args, 3)), "");
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(y[i], -2 * x[i]);
  nerveModuleDestroy(m);
}

} // namespace
