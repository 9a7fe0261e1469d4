//===- LargeTensorCUDATest.cpp - tensors past 2^32 elements on the GPU ----===//
//
// nerve indexes device memory with 64-bit integers (index lowers to i64 in
// kernels too) and caps grids at the hardware's limit, striding over the
// rest. These tests run kernels over f16 tensors of more than 2^32
// elements, with values placed past element 2^32 that a 32-bit index would
// confuse with the first elements: an elementwise map, a row reduction and
// a LIF neuron. Skipped without a GPU or with less than 28 GiB free.
//
//===----------------------------------------------------------------------===//

#include "nerve/Runtime/CudaDriver.h"
#include "nerve/nerve.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

using namespace nerve;
using cuda::CUdeviceptr;

namespace {

constexpr int64_t k2To32 = int64_t(1) << 32;
// f16 bit patterns.
constexpr uint16_t kHalfOnePlus = 0x3C3C; // 1.05859375 (cuMemsetD8 of 0x3C)
constexpr uint16_t kHalfTwiceOnePlus = 0x403C; // 2.1171875
constexpr uint16_t kHalfOne = 0x3C00, kHalfTwo = 0x4000, kHalfFour = 0x4400;
constexpr uint16_t kHalfEight = 0x4800, kHalfPoison = 0xFFFF; // NaN

/// Device buffers, freed at the end of the test.
class Buffers {
public:
  explicit Buffers(cuda::Device *device) : device(device), api(device->api()) {}
  ~Buffers() {
    for (CUdeviceptr p : owned)
      api.cuMemFree(p);
  }
  CUdeviceptr alloc(int64_t halves, unsigned char byte) {
    CUdeviceptr p = 0;
    EXPECT_TRUE(device->check(api.cuMemAlloc(&p, size_t(halves) * 2), "cuMemAlloc"));
    if (p) {
      owned.push_back(p);
      EXPECT_EQ(api.cuMemsetD8(p, byte, size_t(halves) * 2), 0);
    }
    return p;
  }
  void put(CUdeviceptr base, int64_t at, const std::vector<uint16_t> &values) {
    ASSERT_EQ(api.cuMemcpyHtoD(base + CUdeviceptr(at) * 2, values.data(), values.size() * 2), 0);
  }
  std::vector<uint16_t> get(CUdeviceptr base, int64_t at, int64_t count) {
    std::vector<uint16_t> values(size_t(count), 0);
    EXPECT_EQ(api.cuMemcpyDtoH(values.data(), base + CUdeviceptr(at) * 2, size_t(count) * 2), 0);
    return values;
  }

private:
  cuda::Device *device;
  const cuda::DriverAPI &api;
  std::vector<CUdeviceptr> owned;
};

/// The device, when a real one with `gib` GiB free is here.
cuda::Device *bigDevice(int gib, std::string *why) {
  if (!cudaAvailable(why))
    return nullptr;
  cuda::Device *device = *cuda::Device::get();
  if (device->name() == "nerve fake GPU") {
    *why = "the stand-in driver is loaded";
    return nullptr;
  }
  if (!device->makeCurrent())
    return nullptr;
  size_t freeBytes = 0, total = 0;
  device->api().cuMemGetInfo(&freeBytes, &total);
  if (freeBytes < (size_t(gib) << 30)) {
    *why = "needs " + std::to_string(gib) + " GiB of free device memory";
    return nullptr;
  }
  return device;
}

CompileOptions cudaOptions() {
  CompileOptions o;
  o.target = Target::CUDA;
  return o;
}

Status launchAndWait(const Module &m, const std::string &entry, const std::vector<Arg> &args,
                     cuda::Device *device) {
  if (Status s = m.launch(entry, args); !s)
    return s;
  return device->check(device->api().cuCtxSynchronize(), "running the kernel");
}

TEST(LargeTensorCUDA, ElementwiseMapPastElement2To32) {
  std::string why;
  cuda::Device *device = bigDevice(20, &why);
  if (!device)
    GTEST_SKIP() << why;
  auto twice = elementwiseKernel("twice", "f16 x[n]", "f16 y[n]", "y = x * 2", cudaOptions());
  ASSERT_TRUE(twice) << twice.message();
  const int64_t n = k2To32 + 4096;
  Buffers b(device);
  CUdeviceptr x = b.alloc(n, kHalfOnePlus & 0xFF), y = b.alloc(n, 0xFF);
  ASSERT_TRUE(x && y);
  b.put(x, n - 4096, std::vector<uint16_t>(4096, kHalfTwo)); // all past 2^32
  Status s = launchAndWait(**twice, "twice",
                           {Arg::tensor(reinterpret_cast<void *>(x), {n}),
                            Arg::tensor(reinterpret_cast<void *>(y), {n})},
                           device);
  ASSERT_TRUE(s) << s.message();
  std::vector<uint16_t> tail = b.get(y, n - 8192, 8192);
  for (int64_t i = 0; i < 8192; ++i)
    ASSERT_EQ(tail[i], i < 4096 ? kHalfTwiceOnePlus : kHalfFour) << "element " << n - 8192 + i;
  std::vector<uint16_t> head = b.get(y, 0, 4096);
  for (int64_t i = 0; i < 4096; ++i)
    ASSERT_EQ(head[i], kHalfTwiceOnePlus) << "element " << i;
}

TEST(LargeTensorCUDA, RowSumsPastElement2To32) {
  std::string why;
  cuda::Device *device = bigDevice(12, &why);
  if (!device)
    GTEST_SKIP() << why;
  auto rowSum = reductionKernel({"row_sum", "f16 x[r, c]", "f32 s[r]", "x", "a + b", "0", "a"},
                                cudaOptions());
  ASSERT_TRUE(rowSum) << rowSum.message();
  const int64_t c = 32768, r = k2To32 / c + 2; // the last two rows lie past 2^32
  Buffers b(device);
  CUdeviceptr x = b.alloc(r * c, 0x3C);
  CUdeviceptr sums = 0;
  ASSERT_TRUE(device->check(device->api().cuMemAlloc(&sums, size_t(r) * 4), "cuMemAlloc"));
  b.put(x, (r - 1) * c, std::vector<uint16_t>(c, kHalfOne));
  Status s = launchAndWait(**rowSum, "row_sum",
                           {Arg::tensor(reinterpret_cast<void *>(x), {r, c}),
                            Arg::tensor(reinterpret_cast<void *>(sums), {r})},
                           device);
  std::vector<float> got(size_t(r), -1.0f);
  device->api().cuMemcpyDtoH(got.data(), sums, size_t(r) * 4);
  device->api().cuMemFree(sums);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(got[0], 1.05859375f * c);
  EXPECT_EQ(got[r - 2], 1.05859375f * c);
  EXPECT_EQ(got[r - 1], float(c)); // a wrapped index would read row 0's values
}

TEST(LargeTensorCUDA, LIFPastElement2To32) {
  std::string why;
  cuda::Device *device = bigDevice(28, &why);
  if (!device)
    GTEST_SKIP() << why;
  const char *spec = R"(
!seq = !tdim.tensor<[t: ?, n: ?], f16>
tdim.kernel @lif(%x: !seq) -> (%spike: !seq, %v_seq: !seq) {
  neuron.lif ins(%x : !seq) outs(%spike : !seq) v_seq(%v_seq : !seq)
      time t {tau = 2.0, v_threshold = 1.0, v_reset = 0.0}
  tdim.return
}
)";
  auto lif = compile(spec, cudaOptions());
  ASSERT_TRUE(lif) << lif.message();
  const int64_t n = 65536, t = k2To32 / n + 1; // the last step lies past 2^32
  Buffers b(device);
  // x = 0.2627 everywhere: the potential settles below the threshold...
  CUdeviceptr x = b.alloc(t * n, 0x34), spike = b.alloc(t * n, 0xFF), v = b.alloc(t * n, 0xFF);
  ASSERT_TRUE(x && spike && v);
  // ...except at the last step, where the first 1024 neurons get 8 and fire.
  std::vector<uint16_t> last(size_t(n), 0x3434);
  std::fill(last.begin(), last.begin() + 1024, kHalfEight);
  b.put(x, (t - 1) * n, last);
  Status s = launchAndWait(**lif, "lif",
                           {Arg::tensor(reinterpret_cast<void *>(x), {t, n}),
                            Arg::tensor(reinterpret_cast<void *>(spike), {t, n}),
                            Arg::tensor(reinterpret_cast<void *>(v), {t, n})},
                           device);
  ASSERT_TRUE(s) << s.message();
  std::vector<uint16_t> lastSpikes = b.get(spike, (t - 1) * n, n);
  std::vector<uint16_t> lastV = b.get(v, (t - 1) * n, n);
  std::vector<uint16_t> firstSpikes = b.get(spike, 0, n);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(lastSpikes[i], i < 1024 ? kHalfOne : 0) << "last step, neuron " << i;
    if (i < 1024)
      ASSERT_EQ(lastV[i], 0) << "last step, neuron " << i; // hard reset
    else
      ASSERT_NE(lastV[i], kHalfPoison) << "last step, neuron " << i;
    ASSERT_EQ(firstSpikes[i], 0) << "first step, neuron " << i;
  }
}

} // namespace
