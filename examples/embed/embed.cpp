// nerve-embed: nerve inside another program, through its installed package.
//
// 1. compiles a multi-step LIF layer from spec text and lists its kernel;
// 2. builds an elementwise and a reduction kernel from expressions;
// 3. runs them on host arrays (the GPU when there is one, else the CPU),
//    checks every result against a plain C++ reference, and says how long a
//    second compile of the same spec took (the in-process cache).
//
// Exits non-zero, with a message, if anything fails or disagrees.

#include "nerve/nerve.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <vector>

namespace {

const char *kLifSpec = R"(
!seq = !tdim.tensor<[t: ?, n: ?], f32>
tdim.kernel @lif(%x: !seq) -> (%spike: !seq, %v: !seq) {
  neuron.lif ins(%x : !seq) outs(%spike : !seq) v_seq(%v : !seq)
      time t {tau = 2.0, v_threshold = 1.0, v_reset = 0.0}
  tdim.return
}
)";

int failures = 0;

void check(bool ok, const std::string &what) {
  if (!ok) {
    std::cerr << "nerve-embed: MISMATCH: " << what << "\n";
    ++failures;
  }
}

template <typename T>
T orDie(nerve::Result<T> r, const char *what) {
  if (!r) {
    std::cerr << "nerve-embed: " << what << " failed: " << r.message() << "\n";
    std::exit(1);
  }
  return r.take();
}

void orDie(const nerve::Status &s, const char *what) {
  if (!s) {
    std::cerr << "nerve-embed: " << what << " failed: " << s.message() << "\n";
    std::exit(1);
  }
}

} // namespace

int main() {
  std::cout << nerve::versionString() << "\n";
  std::string why;
  bool gpu = nerve::cudaAvailable(&why);
  std::cout << (gpu ? "running on the GPU" : "running on the CPU (" + why + ")") << "\n";

  // 1. A LIF layer from spec text.
  auto lif = orDie(nerve::compile(kLifSpec), "compiling the LIF spec");
  for (const nerve::EntryInfo &e : lif->entries()) {
    std::cout << "@" << e.name << ":";
    for (const nerve::ArgInfo &a : e.args) {
      std::cout << " " << (a.isOutput ? "out " : "") << "%" << a.name << "["
                << nerve::toString(a.dtype) << ";";
      for (const std::string &d : a.dims)
        std::cout << " " << d;
      std::cout << "]";
    }
    std::cout << "\n";
  }
  const int64_t T = 8, N = 1000;
  std::vector<float> x(T * N), spike(T * N), v(T * N);
  for (int64_t i = 0; i < T * N; ++i)
    x[i] = static_cast<float>((i * 37) % 101) / 40.0f; // 0 .. 2.5
  orDie(lif->run("lif", {nerve::Arg::tensor(x.data(), {T, N}),
                         nerve::Arg::tensor(spike.data(), {T, N}),
                         nerve::Arg::tensor(v.data(), {T, N})}),
        "running @lif");
  for (int64_t n = 0; n < N; ++n) {
    float vm = 0; // decay_input, hard reset to 0, threshold 1, tau 2
    for (int64_t t = 0; t < T; ++t) {
      float h = vm + (x[t * N + n] - (vm - 0.0f)) / 2.0f;
      // Exactly at the threshold, rounding may go either way: follow nerve.
      float s = std::fabs(h - 1.0f) < 1e-5f ? spike[t * N + n] : (h >= 1.0f ? 1.0f : 0.0f);
      vm = s > 0 ? 0.0f : h;
      check(spike[t * N + n] == s, "LIF spike at t=" + std::to_string(t));
      check(std::fabs(v[t * N + n] - vm) <= 1e-6f, "LIF v at t=" + std::to_string(t));
    }
  }

  // 2. Kernels from expressions.
  auto swish = orDie(nerve::elementwiseKernel("swish", "f32 x[b, n], f32 beta[n]", "f32 y[b, n]",
                                              "y = x * sigmoid(beta * x)"),
                     "building swish");
  auto rms = orDie(nerve::reductionKernel({"rms", "f32 x[b, n]", "f32 r[b]", "x * x", "a + b",
                                           "0", "sqrt(a / count)"}),
                   "building rms");
  const int64_t B = 4;
  std::vector<float> beta(N), y(B * N), r(B);
  for (int64_t n = 0; n < N; ++n)
    beta[n] = 0.5f + static_cast<float>(n % 3);
  orDie(swish->run("swish", {nerve::Arg::tensor(x.data(), {B, N}),
                             nerve::Arg::tensor(beta.data(), {N}),
                             nerve::Arg::tensor(y.data(), {B, N})}),
        "running swish");
  orDie(rms->run("rms", {nerve::Arg::tensor(x.data(), {B, N}), nerve::Arg::tensor(r.data(), {B})}),
        "running rms");
  for (int64_t b = 0; b < B; ++b) {
    double sum = 0;
    for (int64_t n = 0; n < N; ++n) {
      double xv = x[b * N + n];
      double expect = xv / (1 + std::exp(-beta[n] * xv));
      check(std::fabs(y[b * N + n] - expect) <= 1e-5 * (1 + std::fabs(expect)), "swish");
      sum += xv * xv;
    }
    check(std::fabs(r[b] - std::sqrt(sum / N)) <= 1e-5 * std::sqrt(sum / N), "rms");
  }

  // 3. The same spec again: the module compiled above, from memory.
  auto start = std::chrono::steady_clock::now();
  auto again = orDie(nerve::compile(kLifSpec), "compiling the LIF spec again");
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                  .count();
  check(again == lif, "a repeated compile returns the cached module");
  std::printf("repeated compile: %.1f us\n", us);

  if (failures) {
    std::cerr << "nerve-embed: " << failures << " mismatches\n";
    return 1;
  }
  std::cout << "nerve-embed: all results match the reference\n";
  return 0;
}
