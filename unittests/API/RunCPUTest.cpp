//===- RunCPUTest.cpp - running kernels on the CPU through the API -------===//

#include "nerve/nerve.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

using namespace nerve;

namespace {

const char *kSpec = R"(
!v = !tdim.tensor<[n: ?], f32>
!m = !tdim.tensor<[r: ?, c: ?], f32>
!mt = !tdim.tensor<[r: ?, c: ?], f32, strides=[?, ?]>
!row = !tdim.tensor<[r: ?], f32>
tdim.kernel @scale(%x: !v, %k: f32) -> (%y: !v) {
  tdim.map ins(%x : !v) outs(%y : !v) {
  ^bb0(%a: f32):
    %r = arith.mulf %a, %k : f32
    tdim.yield %r : f32
  }
  tdim.return
}
tdim.kernel @row_sum(%x: !mt) -> (%s: !row) {
  tdim.reduce ins(%x : !mt) outs(%s : !row) over [c] init [0.0 : f32]
    combine {
    ^bb0(%a: f32, %b: f32):
      %r = arith.addf %a, %b : f32
      tdim.yield %r : f32
    }
  tdim.return
}
tdim.kernel @add(%a: !m, %b: !m) -> (%y: !m) {
  tdim.map ins(%a, %b : !m, !m) outs(%y : !m) {
  ^bb0(%p: f32, %q: f32):
    %r = arith.addf %p, %q : f32
    tdim.yield %r : f32
  }
  tdim.return
}
)";

std::shared_ptr<Module> compileCPU() {
  CompileOptions o;
  o.target = Target::CPU;
  Result<std::shared_ptr<Module>> m = compile(kSpec, o);
  EXPECT_TRUE(m) << m.message();
  return m ? *m : nullptr;
}

TEST(RunCPU, ScalesAVector) {
  auto m = compileCPU();
  ASSERT_TRUE(m);
  std::vector<float> x = {1, -2, 3.5f, 0}, y(4, -1);
  Status s = m->run("scale", {Arg::tensor(x.data(), {4}), Arg::scalar(2.0),
                              Arg::tensor(y.data(), {4})});
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(y, (std::vector<float>{2, -4, 7, 0}));
}

TEST(RunCPU, EmptyTensorsAreFine) {
  auto m = compileCPU();
  ASSERT_TRUE(m);
  float dummy = 5;
  Status s = m->run("scale", {Arg::tensor(&dummy, {0}), Arg::scalar(2.0),
                              Arg::tensor(&dummy, {0})});
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(dummy, 5);
}

TEST(RunCPU, ReadsAnyStridedLayout) {
  auto m = compileCPU();
  ASSERT_TRUE(m);
  // A 2x3 matrix stored column-major (strides 1, 2) inside a padded buffer.
  std::vector<float> buf = {1, 4, 2, 5, 3, 6};
  std::vector<float> s(2, 0);
  Status st = m->run("row_sum", {Arg::tensor(buf.data(), {2, 3}, {1, 2}),
                                 Arg::tensor(s.data(), {2})});
  ASSERT_TRUE(st) << st.message();
  EXPECT_EQ(s, (std::vector<float>{6, 15}));
}

void expectRunError(const Module &m, const std::string &entry, const std::vector<Arg> &args,
                    const std::string &fragment) {
  Status s = m.run(entry, args);
  ASSERT_FALSE(s) << "ran without error";
  EXPECT_NE(s.message().find(fragment), std::string::npos)
      << "message: " << s.message() << "\nexpected to contain: " << fragment;
}

TEST(RunCPU, ArgumentErrorsNameTheArgument) {
  auto m = compileCPU();
  ASSERT_TRUE(m);
  std::vector<float> a(6), b(6), y(6);
  expectRunError(*m, "nope", {}, "no kernel @nope");
  expectRunError(*m, "scale", {Arg::tensor(a.data(), {6})},
                 "kernel @scale takes 3 arguments but 1 were given");
  expectRunError(*m, "scale",
                 {Arg::tensor(a.data(), {6}), Arg::tensor(b.data(), {6}),
                  Arg::tensor(y.data(), {6})},
                 "argument %k is a f32 scalar but a tensor was given");
  expectRunError(*m, "scale",
                 {Arg::scalar(1.0), Arg::scalar(1.0), Arg::tensor(y.data(), {6})},
                 "argument %x is a tensor over (n) but a scalar was given");
  expectRunError(*m, "scale",
                 {Arg::tensor(a.data(), {2, 3}), Arg::scalar(1.0), Arg::tensor(y.data(), {6})},
                 "argument %x has 1 dimensions (n) but 2 sizes were given");
  expectRunError(*m, "scale",
                 {Arg::tensor(a.data(), {6}), Arg::scalar(1.0), Arg::tensor(y.data(), {5})},
                 "dimension `n` has size 5 in argument %y but argument %x makes it 6");
  expectRunError(*m, "scale",
                 {Arg::tensor(a.data(), {-1}), Arg::scalar(1.0), Arg::tensor(y.data(), {6})},
                 "negative size");
  expectRunError(*m, "scale",
                 {Arg::tensor(nullptr, {6}), Arg::scalar(1.0), Arg::tensor(y.data(), {6})},
                 "argument %x was given a null pointer");
  // A row-major spec type does not accept another layout.
  expectRunError(*m, "add",
                 {Arg::tensor(a.data(), {2, 3}, {1, 2}), Arg::tensor(b.data(), {2, 3}),
                  Arg::tensor(y.data(), {2, 3})},
                 "stride");
}

TEST(RunCPU, ModulesAreUsableFromManyThreads) {
  // Each thread compiles its own module and runs it, and all share one
  // module too: compiling and running must not race.
  auto shared = compileCPU();
  ASSERT_TRUE(shared);
  constexpr int kThreads = 4;
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      CompileOptions o;
      o.target = Target::CPU;
      Result<std::shared_ptr<Module>> own = compile(kSpec, o);
      if (!own) {
        failures[t] = own.message();
        return;
      }
      for (const Module *m : {own->get(), shared.get()}) {
        std::vector<float> x(1000, static_cast<float>(t)), y(1000);
        for (int rep = 0; rep < 20; ++rep) {
          Status s = m->run("scale", {Arg::tensor(x.data(), {1000}), Arg::scalar(3.0),
                                      Arg::tensor(y.data(), {1000})});
          if (!s || y[999] != 3.0f * static_cast<float>(t)) {
            failures[t] = s ? "wrong result" : s.message();
            return;
          }
        }
      }
    });
  for (std::thread &th : threads)
    th.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(failures[t], "") << "thread " << t;
}

} // namespace
