//===- CpuThreadsTest.cpp - the CPU target's threads ----------------------===//
//
// The thread count is the runtime's (cpuThreads, setCpuThreads,
// CompileOptions::cpuThreads); results must not depend on it: every
// reduction below gives the same bits on 1 to 7 threads.
//
//===----------------------------------------------------------------------===//

#include "nerve/nerve.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <sched.h>

using namespace nerve;

namespace {

const char *kSpec = R"(
!v = !tdim.tensor<[n: ?], f32>
!m = !tdim.tensor<[r: ?, c: ?], f32>
!row = !tdim.tensor<[r: ?], f32>
!col = !tdim.tensor<[c: ?], f32>
!s = !tdim.tensor<[], f32>
tdim.kernel @total(%x: !m) -> (%t: !s) {
  tdim.reduce ins(%x : !m) outs(%t : !s) over [r, c] init [0.0 : f32]
    combine {
    ^bb0(%a: f32, %b: f32):
      %r = arith.addf %a, %b : f32
      tdim.yield %r : f32
    }
  tdim.return
}
tdim.kernel @vector_total(%x: !v) -> (%t: !s) {
  tdim.reduce ins(%x : !v) outs(%t : !s) over [n] init [0.0 : f32]
    combine {
    ^bb0(%a: f32, %b: f32):
      %r = arith.addf %a, %b : f32
      tdim.yield %r : f32
    }
  tdim.return
}
tdim.kernel @sums(%x: !m) -> (%rows: !row, %cols: !col) {
  tdim.reduce ins(%x : !m) outs(%rows : !row) over [c] init [0.0 : f32]
    combine {
    ^bb0(%a: f32, %b: f32):
      %r = arith.addf %a, %b : f32
      tdim.yield %r : f32
    }
  tdim.reduce ins(%x : !m) outs(%cols : !col) over [r] init [0.0 : f32]
    combine {
    ^bb0(%a: f32, %b: f32):
      %r = arith.addf %a, %b : f32
      tdim.yield %r : f32
    }
  tdim.return
}
)";

std::vector<float> randomData(size_t n) {
  std::mt19937 gen(7);
  std::normal_distribution<float> dist;
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

/// Restores the process's thread setting when a test ends.
struct ThreadSetting {
  ~ThreadSetting() { (void)setCpuThreads(0); }
};

TEST(CpuThreads, DefaultIsTheAvailableCoresOrTheEnvironment) {
  ThreadSetting restore;
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  const char *env = std::getenv("NERVE_NUM_THREADS");
  int expected = env ? std::atoi(env) : CPU_COUNT(&set);
  EXPECT_EQ(cpuThreads(), expected);
  ASSERT_TRUE(setCpuThreads(3));
  EXPECT_EQ(cpuThreads(), 3);
  ASSERT_TRUE(setCpuThreads(0));
  EXPECT_EQ(cpuThreads(), expected);
}

TEST(CpuThreads, OutOfRangeIsAnError) {
  ThreadSetting restore;
  ASSERT_TRUE(setCpuThreads(2));
  Status s = setCpuThreads(-1);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "threads must be from 1 to 4096, or 0 for the default, not -1");
  EXPECT_FALSE(setCpuThreads(5000));
  EXPECT_EQ(cpuThreads(), 2);
  CompileOptions o;
  o.target = Target::CPU;
  o.cpuThreads = -2;
  Result<std::shared_ptr<Module>> m = compile(kSpec, o);
  ASSERT_FALSE(m);
  EXPECT_NE(m.message().find("cpu threads -2 is out of range 0-4096"), std::string::npos)
      << m.message();
}

/// The bits of every output of `entry` on `threads` threads.
std::vector<std::vector<float>> runOn(const Module &m, const std::string &entry, int threads,
                                      std::vector<float> &x, std::vector<int64_t> sizes,
                                      std::vector<size_t> outSizes) {
  EXPECT_TRUE(setCpuThreads(threads));
  std::vector<std::vector<float>> outs;
  for (size_t n : outSizes)
    outs.emplace_back(n, -1.0f);
  std::vector<Arg> args = {Arg::tensor(x.data(), sizes)};
  for (size_t i = 0; i < outs.size(); ++i)
    args.push_back(Arg::tensor(outs[i].data(), i == 0 && outSizes[0] == 1
                                                   ? std::vector<int64_t>{}
                                                   : std::vector<int64_t>{sizes[i]}));
  Status s = m.run(entry, args);
  EXPECT_TRUE(s) << s.message();
  return outs;
}

TEST(CpuThreads, ReductionsGiveTheSameBitsOnAnyNumberOfThreads) {
  ThreadSetting restore;
  CompileOptions o;
  o.target = Target::CPU;
  Result<std::shared_ptr<Module>> m = compile(kSpec, o);
  ASSERT_TRUE(m) << m.message();
  const int64_t rows = 777, cols = 1031;
  std::vector<float> x = randomData(rows * cols);
  auto total1 = runOn(**m, "total", 1, x, {rows, cols}, {1});
  auto vector1 = runOn(**m, "vector_total", 1, x, {rows * cols}, {1});
  auto sums1 = runOn(**m, "sums", 1, x, {rows, cols}, {size_t(rows), size_t(cols)});
  double exact = 0;
  for (float v : x)
    exact += v;
  EXPECT_NEAR(total1[0][0], exact, 1e-3 * std::sqrt(double(x.size())));
  EXPECT_NEAR(vector1[0][0], exact, 1e-3 * std::sqrt(double(x.size())));
  for (int threads : {2, 3, 4, 7}) {
    EXPECT_EQ(runOn(**m, "total", threads, x, {rows, cols}, {1}), total1) << threads;
    EXPECT_EQ(runOn(**m, "vector_total", threads, x, {rows * cols}, {1}), vector1) << threads;
    EXPECT_EQ(runOn(**m, "sums", threads, x, {rows, cols}, {size_t(rows), size_t(cols)}), sums1)
        << threads;
  }
}

TEST(CpuThreads, AModuleMayFixItsThreads) {
  ThreadSetting restore;
  CompileOptions o;
  o.target = Target::CPU;
  o.cpuThreads = 3;
  Result<std::shared_ptr<Module>> fixed = compile(kSpec, o);
  ASSERT_TRUE(fixed) << fixed.message();
  o.cpuThreads = 0;
  Result<std::shared_ptr<Module>> following = compile(kSpec, o);
  ASSERT_TRUE(following) << following.message();
  // Not one module from the in-process cache: the options differ.
  EXPECT_NE(fixed->get(), following->get());
  std::vector<float> x = randomData(4096);
  auto a = runOn(**fixed, "vector_total", 1, x, {4096}, {1});
  auto b = runOn(**following, "vector_total", 2, x, {4096}, {1});
  EXPECT_EQ(a, b);
}

} // namespace
