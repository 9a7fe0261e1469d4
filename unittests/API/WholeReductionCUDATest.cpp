//===- WholeReductionCUDATest.cpp - a reduction's bits at any alignment --===//
//
// A whole-tensor reduction folds 16-byte chunks of its iterations (over a
// matrix, in row-major order): by vector loads when the buffer is dense and
// aligned to them, by scalar loads otherwise (a host check at each
// launch), both in the same order. These tests reduce the same values from
// an aligned buffer and from one element past an aligned address and
// expect the same bits, near the float64 sum. Skipped without a GPU.
//
//===----------------------------------------------------------------------===//

#include "nerve/Runtime/CudaDriver.h"
#include "nerve/Runtime/HostArray.h"
#include "nerve/nerve.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

using namespace nerve;
using cuda::CUdeviceptr;

namespace {

/// The device, when a real one is here.
cuda::Device *realDevice(std::string *why) {
  if (!cudaAvailable(why))
    return nullptr;
  cuda::Device *device = *cuda::Device::get();
  if (device->name() == "nerve fake GPU") {
    *why = "the stand-in driver is loaded";
    return nullptr;
  }
  return device->makeCurrent() ? device : nullptr;
}

/// `values` (raw element bytes) at element `offset` of a fresh device
/// buffer; the bits of the `resultBytes`-byte result the spec's kernel
/// computes over them.
uint32_t deviceResult(cuda::Device *device, const Module &m,
                      const std::vector<unsigned char> &values, std::vector<int64_t> sizes,
                      int64_t elementBytes, int64_t offset, int64_t resultBytes) {
  const cuda::DriverAPI &api = device->api();
  CUdeviceptr base = 0, out = 0;
  EXPECT_TRUE(device->check(api.cuMemAlloc(&base, values.size() + 64), "cuMemAlloc"));
  EXPECT_TRUE(device->check(api.cuMemAlloc(&out, 4), "cuMemAlloc"));
  CUdeviceptr at = base + CUdeviceptr(offset * elementBytes);
  EXPECT_EQ(api.cuMemcpyHtoD(at, values.data(), values.size()), 0);
  Status s = m.launch("total", {Arg::tensor(reinterpret_cast<void *>(at), std::move(sizes)),
                                Arg::tensor(reinterpret_cast<void *>(out), {})});
  EXPECT_TRUE(s) << s.message();
  EXPECT_TRUE(device->check(api.cuCtxSynchronize(), "running the kernel"));
  uint32_t bits = 0xFFFFFFFF;
  EXPECT_EQ(api.cuMemcpyDtoH(&bits, out, resultBytes), 0);
  api.cuMemFree(base);
  api.cuMemFree(out);
  return resultBytes == 4 ? bits : bits & ((1u << (8 * resultBytes)) - 1);
}

float floatOf(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// The f32 sum the spec's kernel computes (deviceResult).
float deviceSum(cuda::Device *device, const Module &m, const std::vector<unsigned char> &values,
                std::vector<int64_t> sizes, int64_t elementBytes, int64_t offset) {
  return floatOf(deviceResult(device, m, values, std::move(sizes), elementBytes, offset, 4));
}

std::string sumSpec(const char *type, const char *dims = "n: ?", const char *over = "n") {
  return std::string("!v = !tdim.tensor<[") + dims + "], " + type + R"(>
tdim.kernel @total(%x: !v) -> (%s: !tdim.tensor<[], f32>) {
  tdim.reduce ins(%x : !v) outs(%s : !tdim.tensor<[], f32>) over [)" +
         over + R"(] init [0.0 : f32]
    combine {
    ^bb0(%a: f32, %b: f32):
      %r = arith.addf %a, %b : f32
      tdim.yield %r : f32
    }
  tdim.return
}
)";
}

/// Values of many significant bits, whose sums round differently in
/// different orders.
float valueAt(int64_t i) { return float((i * 7919) % 2048 - 1024) / 1024.0f + 1.0f / 3.0f; }

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

/// `count` f32 values (valueAt) as bytes, and their float64 sum.
std::pair<std::vector<unsigned char>, double> f32Values(int64_t count) {
  std::vector<unsigned char> bytes(size_t(count) * 4);
  double exact = 0;
  for (int64_t i = 0; i < count; ++i) {
    float v = valueAt(i);
    exact += v;
    std::memcpy(&bytes[size_t(i) * 4], &v, 4);
  }
  return {bytes, exact};
}

/// The numerator k of f16 value i, k / 1024 with k in [-1024, 1024).
int64_t f16Numerator(int64_t i) { return (i * 7919) % 2048 - 1024; }

/// `count` f16 values k / 1024 (f16Numerator; exact in f16) as bytes, and
/// their float64 sum.
std::pair<std::vector<unsigned char>, double> f16Values(int64_t count) {
  std::vector<unsigned char> bytes(size_t(count) * 2);
  double exact = 0;
  for (int64_t i = 0; i < count; ++i) {
    int64_t k = f16Numerator(i);
    exact += double(k) / 1024.0;
    // f16 of k / 1024: sign, exponent and a 10-bit mantissa.
    uint16_t h = 0;
    if (k != 0) {
      int64_t mag = k < 0 ? -k : k;
      int e = 0;
      while ((mag >> (e + 1)) != 0)
        ++e;                                        // mag in [2^e, 2^(e+1))
      int64_t mantissa = (mag << (10 - e)) & 0x3FF; // exact: e <= 10
      h = uint16_t((k < 0 ? 0x8000 : 0) | ((e - 10 + 15) << 10) | mantissa);
    }
    std::memcpy(&bytes[size_t(i) * 2], &h, 2);
  }
  return {bytes, exact};
}

/// The sum of `values` over `sizes` from an aligned buffer and from one
/// element past it: the same bits, near their float64 sum.
void expectSameBitsAtAnyAlignment(cuda::Device *device, const Module &m,
                                  const std::pair<std::vector<unsigned char>, double> &values,
                                  const std::vector<int64_t> &sizes, int64_t elementBytes) {
  int64_t n = 1;
  for (int64_t size : sizes)
    n *= size;
  float aligned = deviceSum(device, m, values.first, sizes, elementBytes, 0);
  float shifted = deviceSum(device, m, values.first, sizes, elementBytes, 1);
  EXPECT_EQ(bitsOf(aligned), bitsOf(shifted))
      << n << " elements: " << aligned << " against " << shifted;
  EXPECT_NEAR(aligned, values.second, 1e-5 * n) << n << " elements";
}

CompileOptions cudaOptions() {
  CompileOptions o;
  o.target = Target::CUDA;
  return o;
}

/// Skips without a real GPU; `device` otherwise.
class WholeReductionCUDA : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why;
    device = realDevice(&why);
    if (!device)
      GTEST_SKIP() << why;
  }
  cuda::Device *device = nullptr;
};

TEST_F(WholeReductionCUDA, AnF32VectorSumHasTheSameBitsAtAnyAlignment) {
  auto m = compile(sumSpec("f32"), cudaOptions());
  ASSERT_TRUE(m) << m.message();
  for (int64_t n : {3, 4, 5, 4099, 1000003})
    expectSameBitsAtAnyAlignment(device, **m, f32Values(n), {n}, 4);
}

TEST_F(WholeReductionCUDA, AnF16VectorSumHasTheSameBitsAtAnyAlignment) {
  auto m = compile(sumSpec("f16"), cudaOptions());
  ASSERT_TRUE(m) << m.message();
  for (int64_t n : {7, 8, 9, 1000003})
    expectSameBitsAtAnyAlignment(device, **m, f16Values(n), {n}, 2);
}

// Over a matrix, chunks run through the iterations in row-major order
// (across rows when the rows are not whole chunks): by vector loads of a
// flat view when the buffer is dense and aligned, by each element at its
// own position otherwise.
TEST_F(WholeReductionCUDA, AMatrixSumHasTheSameBitsAtAnyAlignment) {
  auto m = compile(sumSpec("f32", "r: ?, c: ?", "r, c"), cudaOptions());
  ASSERT_TRUE(m) << m.message();
  for (auto [r, c] : {std::pair<int64_t, int64_t>{3, 5}, {37, 101}, {1000, 127}, {4099, 33}})
    expectSameBitsAtAnyAlignment(device, **m, f32Values(r * c), {r, c}, 4);
}

// A kernel whose data is all 16-bit fuses the square and the sum into one
// multiply-add (nerve-half-storage-math): both forms alike, so the f16
// mean of squares has the same bits too.
TEST_F(WholeReductionCUDA, AnF16MeanSquareHasTheSameBitsAtAnyAlignment) {
  auto m = compile(R"(!v = !tdim.tensor<[n: ?], f16>
tdim.kernel @total(%x: !v) -> (%ms: !tdim.tensor<[], f16>) {
  tdim.reduce ins(%x : !v) outs(%ms : !tdim.tensor<[], f16>) over [n] init [0.0 : f32]
    map {
    ^bb0(%v: f32):
      %sq = arith.mulf %v, %v : f32
      tdim.yield %sq : f32
    }
    combine {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      tdim.yield %s : f32
    }
    post {
    ^bb0(%acc: f32, %count: index):
      %i = arith.index_cast %count : index to i64
      %c = arith.sitofp %i : i64 to f32
      %mean = arith.divf %acc, %c : f32
      tdim.yield %mean : f32
    }
  tdim.return
}
)",
                   cudaOptions());
  ASSERT_TRUE(m) << m.message();
  for (int64_t n : {7, 9, 4099, 1000003}) {
    auto values = f16Values(n);
    double exact = 0;
    for (int64_t i = 0; i < n; ++i) {
      double k = double(f16Numerator(i)) / 1024.0;
      exact += k * k;
    }
    exact /= double(n);
    uint32_t aligned = deviceResult(device, **m, values.first, {n}, 2, 0, 2);
    uint32_t shifted = deviceResult(device, **m, values.first, {n}, 2, 1, 2);
    EXPECT_EQ(aligned, shifted) << n << " elements";
    uint32_t exponent = (aligned >> 10) & 0x1F;
    ASSERT_GT(exponent, 0u) << n << " elements: " << aligned; // a normal f16
    EXPECT_NEAR(halfToFloat(uint16_t(aligned)), exact, 2e-3) << n << " elements";
  }
}

} // namespace
