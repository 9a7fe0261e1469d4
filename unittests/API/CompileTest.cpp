//===- CompileTest.cpp - compiling specs through the C++ API --------------===//

#include "nerve/nerve.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <thread>
#include <vector>

using namespace nerve;

namespace {

const char *kScaleSpec = R"(
!v = !tdim.tensor<[n: ?], f32>
tdim.kernel @scale(%x: !v, %k: f32) -> (%y: !v) {
  tdim.map ins(%x : !v) outs(%y : !v) {
  ^bb0(%a: f32):
    %r = arith.mulf %a, %k : f32
    tdim.yield %r : f32
  }
  tdim.return
}
)";

CompileOptions cpu() {
  CompileOptions o;
  o.target = Target::CPU;
  return o;
}

TEST(Compile, DescribesEntries) {
  Result<std::shared_ptr<Module>> m = compile(kScaleSpec, cpu());
  ASSERT_TRUE(m) << m.message();
  EXPECT_EQ((*m)->target(), Target::CPU);
  ASSERT_EQ((*m)->entries().size(), 1u);
  const EntryInfo *e = (*m)->findEntry("scale");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ((*m)->findEntry("nope"), nullptr);
  ASSERT_EQ(e->args.size(), 3u);
  EXPECT_EQ(e->numInputs(), 2u);
  EXPECT_EQ(e->args[0].name, "x");
  EXPECT_TRUE(e->args[0].isTensor);
  EXPECT_FALSE(e->args[0].isOutput);
  EXPECT_EQ(e->args[0].dims, (std::vector<std::string>{"n"}));
  EXPECT_EQ(e->args[0].sizes, (std::vector<int64_t>{-1}));
  EXPECT_EQ(e->args[1].name, "k");
  EXPECT_FALSE(e->args[1].isTensor);
  EXPECT_EQ(e->args[1].dtype, DType::F32);
  EXPECT_EQ(e->args[2].name, "y");
  EXPECT_TRUE(e->args[2].isOutput);
  EXPECT_TRUE(e->variableDims.empty());
  EXPECT_TRUE((*m)->ptx().empty());
  EXPECT_NE((*m)->llvmIR().find("scale"), std::string::npos);
}

TEST(Compile, DescribesLayoutsFoldsAndConcatAxes) {
  const char *spec = R"(
!img = !tdim.tensor<[b: ?, h: 4, w: 4, c: 8], f16, strides=[128, 32, 8, 1]>
!cl = !tdim.tensor<[b: ?, c: 8, h: 4, w: 4], f16, strides=[128, 1, 32, 8]>
tdim.kernel @copy(%x: !img) -> (%y: !cl) {
  tdim.map ins(%x : !img) outs(%y : !cl) {
  ^bb0(%a: f16):
    tdim.yield %a : f16
  }
  tdim.return
}
!m = !tdim.tensor<[r: ?, c: ?], f32>
tdim.kernel @cat(%a: !m, %b: !m) -> (%y: !m) {
  tdim.concat ins(%a, %b : !m, !m) outs(%y : !m) along c
  tdim.return
}
)";
  Result<std::shared_ptr<Module>> m = compile(spec, cpu());
  ASSERT_TRUE(m) << m.message();
  const EntryInfo *copy = (*m)->findEntry("copy");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->args[0].dtype, DType::F16);
  EXPECT_EQ(copy->args[0].sizes, (std::vector<int64_t>{-1, 4, 4, 8}));
  EXPECT_EQ(copy->args[1].dims, (std::vector<std::string>{"b", "c", "h", "w"}));
  EXPECT_EQ(copy->args[1].strides, (std::vector<int64_t>{128, 1, 32, 8}));
  const EntryInfo *cat = (*m)->findEntry("cat");
  ASSERT_NE(cat, nullptr);
  EXPECT_EQ(cat->variableDims, (std::vector<std::string>{"c"}));
}

TEST(Compile, RecordsWhereTheTimeWent) {
  CompileOptions options = cpu();
  options.cache = false; // a cold compile, every stage
  Result<std::shared_ptr<Module>> m = compile(kScaleSpec, options);
  ASSERT_TRUE(m) << m.message();
  const auto &times = (*m)->compileTimes();
  ASSERT_FALSE(times.empty());
  bool sawParse = false, sawCodegen = false, sawLink = false;
  for (const auto &[stage, ms] : times) {
    EXPECT_GE(ms, 0.0) << stage;
    sawParse |= stage.find("pars") != std::string::npos;
    sawCodegen |= stage == "host code generation";
    sawLink |= stage == "link host code";
  }
  EXPECT_TRUE(sawParse);
  EXPECT_TRUE(sawCodegen);
  EXPECT_TRUE(sawLink);
}

void expectCompileError(const std::string &spec, const std::string &fragment) {
  Result<std::shared_ptr<Module>> m = compile(spec, cpu());
  ASSERT_FALSE(m) << "compiled without error";
  EXPECT_NE(m.message().find(fragment), std::string::npos)
      << "message: " << m.message() << "\nexpected to contain: " << fragment;
}

TEST(Compile, ErrorsSayWhatAndWhere) {
  expectCompileError("this is not MLIR", "spec:1:1: error: custom op 'this' is unknown");
  // A dimension the tensor does not have: the verifier's message, with a
  // line number into the spec.
  expectCompileError(R"(
!v = !tdim.tensor<[n: ?], f32>
tdim.kernel @bad(%x: !v) -> (%y: !v) {
  %i = tdim.const 0 : !tdim.index<m>
  %a = tdim.load %x[m = %i] : !v
  tdim.store %a, %y[m = %i] : !v
  tdim.return
}
)",
                     "spec:5:8: error: 'tdim.load' op tensor has no dimension `m` (it has `n`)");
  expectCompileError("", "the spec has no tdim.kernel to compile");
}

TEST(Compile, DiagnosticsNameTheFile) {
  std::string path = ::testing::TempDir() + "nerve-bad-spec.mlir";
  {
    std::ofstream out(path);
    out << "\n\n  tdim.bogus\n";
  }
  Result<std::shared_ptr<Module>> m = compileFile(path, cpu());
  ASSERT_FALSE(m);
  EXPECT_EQ(m.message().rfind(path + ":3:3: error:", 0), 0u) << m.message();
  std::remove(path.c_str());
}

TEST(Compile, MissingFileSaysSo) {
  Result<std::shared_ptr<Module>> m = compileFile("/nonexistent/spec.mlir", cpu());
  ASSERT_FALSE(m);
  EXPECT_NE(m.message().find("/nonexistent/spec.mlir"), std::string::npos) << m.message();
}

TEST(Emit, PTXNeedsNoGPU) {
  CompileOptions o;
  o.target = Target::CUDA;
  o.libdevice = "none";
  o.chip = "sm_80";
  Result<std::string> ptx = emit(kScaleSpec, o, Emit::PTX);
  ASSERT_TRUE(ptx) << ptx.message();
  EXPECT_NE(ptx->find(".target sm_80"), std::string::npos);
  EXPECT_NE(ptx->find(".visible .entry scale_kernel("), std::string::npos);

  Result<std::string> host = emit(kScaleSpec, o, Emit::LLVMIR);
  ASSERT_TRUE(host) << host.message();
  EXPECT_NE(host->find("mgpuLaunchKernel"), std::string::npos);
}

TEST(Emit, ThreadsEmittingAtOnceGetWhatOneThreadGets) {
  // Each emit generates its PTX on a thread of its own beside the host
  // code; several at once, each with its own context, share LLVM's targets
  // and nerve's thread pool.
  CompileOptions o;
  o.target = Target::CUDA;
  o.libdevice = "none";
  Result<std::string> ptx = emit(kScaleSpec, o, Emit::PTX);
  Result<std::string> host = emit(kScaleSpec, o, Emit::LLVMIR);
  ASSERT_TRUE(ptx) << ptx.message();
  ASSERT_TRUE(host) << host.message();
  constexpr int kThreads = 4;
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 3; ++rep) {
        Emit what = (t + rep) % 2 ? Emit::PTX : Emit::LLVMIR;
        Result<std::string> got = emit(kScaleSpec, o, what);
        if (!got)
          failures[t] = got.message();
        else if (*got != (what == Emit::PTX ? *ptx : *host))
          failures[t] = "a different result";
      }
    });
  for (std::thread &th : threads)
    th.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(failures[t], "") << "thread " << t;
}

TEST(Emit, RejectsUnknownChipAndOptLevel) {
  CompileOptions o;
  o.target = Target::CUDA;
  o.libdevice = "none";
  o.chip = "sm_70";
  Result<std::string> ptx = emit(kScaleSpec, o, Emit::PTX);
  ASSERT_FALSE(ptx);
  EXPECT_NE(ptx.message().find("unknown chip 'sm_70'"), std::string::npos) << ptx.message();
  o.chip = "sm_90";
  o.optLevel = 7;
  Result<std::string> bad = emit(kScaleSpec, o, Emit::PTX);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("7"), std::string::npos) << bad.message();
}

// The API accepts the time blocks the lowering does (up to 128 steps: a
// 16-bit time-minor row's 256 bytes), and no more.
TEST(Emit, NeuronTimeBlockRange) {
  const char *spec = R"(
!seq = !tdim.tensor<[n: ?, t: ?], f16>
tdim.kernel @infer(%x: !seq) -> (%spike: !seq) {
  neuron.lif ins(%x : !seq) outs(%spike : !seq) time t {tau = 2.0, v_threshold = 1.0, v_reset = 0.0}
  tdim.return
}
)";
  CompileOptions o;
  o.target = Target::CPU;
  o.neuronTimeBlock = 128;
  Result<std::string> ok = emit(spec, o, Emit::LLVMIR);
  EXPECT_TRUE(ok) << ok.message();
  o.neuronTimeBlock = 129;
  Result<std::string> bad = emit(spec, o, Emit::LLVMIR);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("out of range 0-128"), std::string::npos) << bad.message();
}

TEST(Version, NamesNerveAndLLVM) {
  std::string v = versionString();
  EXPECT_NE(v.find("nerve"), std::string::npos) << v;
  EXPECT_NE(v.find("LLVM"), std::string::npos) << v;
}

} // namespace
