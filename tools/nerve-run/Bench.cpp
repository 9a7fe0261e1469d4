//===- Bench.cpp - nerve-run --bench: a kernel timed against the copy ----===//
//
// Timing for nerve-run's --bench: CPU runs against the host memcpy
// bandwidth (on the kernel's threads, the last-level cache emptied before
// each run), GPU runs with device events against the device copy
// bandwidth and a copy of the same bytes, L2 emptied before each run.
//
//===----------------------------------------------------------------------===//

#include "Bench.h"

#include "nerve/Runtime/CudaDriver.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <unistd.h>

namespace nerve::run {

Result<L2FlushMode> parseL2Flush(const std::string &name) {
  if (name == "read")
    return L2FlushMode::Read;
  if (name == "write")
    return L2FlushMode::Write;
  if (name == "none")
    return L2FlushMode::None;
  return Status::error("--l2-flush takes read, write or none, not '" + name + "'");
}

const char *describeL2Flush(L2FlushMode mode) {
  switch (mode) {
  case L2FlushMode::Read:
    return "emptied by reading 256 MiB (--l2-flush=read)";
  case L2FlushMode::Write:
    return "emptied by a 256 MiB memset, leaving dirty lines (--l2-flush=write)";
  case L2FlushMode::None:
    return "left as the last run left it (--l2-flush=none)";
  }
  return "";
}

static double medianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}


/// Bytes per second a large host memcpy reaches (read + written) on
/// `threads` threads, each copying its own contiguous part: the CPU's
/// counterpart of the device copy bandwidth, on as many cores as the kernel.
static double hostCopyBandwidth(int threads) {
  const size_t bytes = size_t(256) << 20;
  std::vector<uint8_t> a(bytes, 1), b(bytes, 0);
  const size_t part = (bytes / threads + 63) / 64 * 64;
  auto copyPart = [&](int t) {
    size_t begin = std::min(bytes, t * part), end = std::min(bytes, begin + part);
    std::memcpy(b.data() + begin, a.data() + begin, end - begin);
  };
  std::vector<double> times;
  for (int i = 0; i < 5; ++i) {
    auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (int t = 1; t < threads; ++t)
      workers.emplace_back(copyPart, t);
    copyPart(0);
    for (std::thread &w : workers)
      w.join();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    a[i] = b[bytes - 1 - i];
  }
  return 2.0 * bytes / medianOf(times);
}

/// Reads twice the last-level cache on `threads` threads, so that the timed
/// run finds none of its data there (a server's L3 holds a mid-sized
/// problem, as H200's L2 does on the GPU).
static void flushHostCaches(int threads) {
  long llc = 0;
#ifdef _SC_LEVEL3_CACHE_SIZE
  llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
  static std::vector<uint64_t> buffer(std::max<long>(llc, 32L << 20) * 2 / 8, 1);
  std::vector<uint64_t> sums(threads, 0);
  const size_t part = (buffer.size() + threads - 1) / threads;
  auto readPart = [&](int t) {
    uint64_t sum = 0;
    for (size_t i = t * part, end = std::min(buffer.size(), i + part); i < end; i += 8)
      sum += buffer[i];
    sums[t] = sum;
  };
  std::vector<std::thread> workers;
  for (int t = 1; t < threads; ++t)
    workers.emplace_back(readPart, t);
  readPart(0);
  for (std::thread &w : workers)
    w.join();
  buffer[0] = sums[0] & 1; // a use of the sums
}

Result<BenchResult> benchCpu(const Module &module, const std::string &entry,
                             const std::vector<Arg> &args, unsigned runs, int threads) {
  BenchResult r;
  std::vector<double> times;
  for (unsigned i = 0; i < runs; ++i) {
    flushHostCaches(threads);
    auto start = std::chrono::steady_clock::now();
    if (Status s = module.launch(entry, args); !s)
      return s;
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  r.medianMs = medianOf(times);
  r.minMs = *std::min_element(times.begin(), times.end());
  r.copyGBs = hostCopyBandwidth(threads) / 1e9;
  r.copyThreads = threads;
  return r;
}

/// Empties L2 before a timed run, so that no run finds its inputs there.
/// H200's L2 holds 50 MB, as much as a mid-sized problem. How matters for
/// kernels that write little: a memset leaves L2 full of dirty lines, and
/// the timed kernel then pays for writing back 50 MB it never wrote (a third
/// of a 16-bit 16384 x 4096 row sum's own bytes). The default reads 256 MiB
/// instead, with a row sum nerve compiles, which leaves clean lines.
namespace {

class L2Flush {
public:
  using Mode = L2FlushMode;

  static Result<std::unique_ptr<L2Flush>> create(Mode mode, cuda::Device &device,
                                                 const CompileOptions &options) {
    std::unique_ptr<L2Flush> flush(new L2Flush(mode, device));
    if (mode == Mode::None)
      return flush;
    const cuda::DriverAPI &api = device.api();
    if (Status s = device.check(api.cuMemAlloc(&flush->buffer_, kBytes),
                                "allocating the L2 flush buffer");
        !s)
      return s;
    if (mode == Mode::Write)
      return flush;
    api.cuMemsetD8(flush->buffer_, 0, kBytes); // the reader's input, defined
    if (Status s = device.check(api.cuMemAlloc(&flush->sums_, kRows * 4),
                                "allocating the L2 flush buffer");
        !s)
      return s;
    // kRows x kColumns f32, summed by rows.
    static const char *spec = R"(
      !x = !tdim.tensor<[r: 65536, c: 1024], f32>
      tdim.kernel @l2_flush(%x: !x) -> (%sum: !tdim.tensor<[r: 65536], f32>) {
        tdim.reduce ins(%x : !x) outs(%sum : !tdim.tensor<[r: 65536], f32>) over [c]
          init [0.0 : f32] combine {
          ^bb0(%a: f32, %b: f32):
            %s = arith.addf %a, %b : f32
            tdim.yield %s : f32
          }
        tdim.return
      })";
    CompileOptions flushOptions = options;
    flushOptions.sourceName = "<l2-flush>";
    Result<std::shared_ptr<Module>> compiled = compile(spec, flushOptions);
    if (!compiled)
      return compiled.status();
    flush->reader_ = compiled.take();
    return flush;
  }

  /// Enqueues the eviction on `stream`; `i` varies the memset's byte.
  Status enqueue(cuda::CUstream stream, unsigned i) const {
    const cuda::DriverAPI &api = device_.api();
    switch (mode_) {
    case Mode::None:
      return Status();
    case Mode::Write:
      return device_.check(api.cuMemsetD8Async(buffer_, static_cast<unsigned char>(i), kBytes,
                                               stream),
                           "cuMemsetD8Async");
    case Mode::Read:
      return reader_->launch(
          "l2_flush",
          {Arg::tensor(reinterpret_cast<void *>(buffer_), {int64_t(kRows), int64_t(kColumns)}),
           Arg::tensor(reinterpret_cast<void *>(sums_), {int64_t(kRows)})},
          stream);
    }
    return Status();
  }

  ~L2Flush() {
    if (buffer_)
      device_.api().cuMemFree(buffer_);
    if (sums_)
      device_.api().cuMemFree(sums_);
  }

private:
  static constexpr size_t kRows = 65536, kColumns = 1024; // 256 MiB of f32
  static constexpr size_t kBytes = kRows * kColumns * sizeof(float);

  L2Flush(Mode mode, cuda::Device &device) : mode_(mode), device_(device) {}

  Mode mode_;
  cuda::Device &device_;
  cuda::CUdeviceptr buffer_ = 0, sums_ = 0;
  std::shared_ptr<Module> reader_;
};

} // namespace

/// Times `runs` launches with device events after a warm-up, L2 emptied
/// before each as `flushMode` says, the device's copy bandwidth (a 1 GiB
/// device-to-device copy, bytes read plus written) and a copy moving
/// `bytesMoved` in the same process, emptied the same way.
Result<BenchResult> benchGpu(const Module &module, const std::string &entry,
                                    const std::vector<Arg> &args, unsigned runs,
                                    uint64_t bytesMoved, L2FlushMode flushMode,
                                    const CompileOptions &options) {
  Result<cuda::Device *> found = cuda::Device::get();
  if (!found)
    return found.status();
  cuda::Device *device = *found;
  const cuda::DriverAPI &api = device->api();
  cuda::CUstream stream = nullptr;
  if (Status s = device->check(api.cuStreamCreate(&stream, 0), "cuStreamCreate"); !s)
    return s;
  std::vector<cuda::CUevent> events(2 * runs + 2, nullptr);
  for (cuda::CUevent &e : events)
    if (Status s = device->check(api.cuEventCreate(&e, 0), "cuEventCreate"); !s)
      return s;
  auto cleanup = [&] {
    for (cuda::CUevent e : events)
      if (e)
        api.cuEventDestroy(e);
    api.cuStreamDestroy(stream);
  };
  BenchResult r;
  Result<std::unique_ptr<L2Flush>> flush = L2Flush::create(flushMode, *device, options);
  if (!flush) {
    cleanup();
    return flush.status();
  }
  Status status;
  for (int warm = 0; warm < 3 && status; ++warm)
    status = module.launch(entry, args, stream);
  std::vector<double> times;
  for (unsigned i = 0; i < runs && status; ++i) {
    status = (*flush)->enqueue(stream, i);
    if (!status)
      break;
    api.cuEventRecord(events[2 * i], stream);
    status = module.launch(entry, args, stream);
    api.cuEventRecord(events[2 * i + 1], stream);
    // Each run waits for the one before, as the copies below and the
    // benchmarks' PyTorch runs are timed: enqueued back to back, the same
    // kernels measured 1-11% slower on an H200 (docs/decisions.md, "Timed
    // runs wait for each other").
    if (status)
      status = device->check(api.cuEventSynchronize(events[2 * i + 1]),
                             ("running kernel @" + entry + " on the GPU").c_str());
  }
  if (status)
    status = device->check(api.cuStreamSynchronize(stream),
                           ("running kernel @" + entry + " on the GPU").c_str());
  // The median time of `timed` device copies after `warm` untimed ones,
  // with L2 evicted before each when `flushFirst`; failures go to `status`.
  auto timeCopies = [&](cuda::CUdeviceptr to, cuda::CUdeviceptr from, size_t bytes,
                        unsigned warm, unsigned timed, bool flushFirst) {
    std::vector<double> copies;
    for (unsigned i = 0; i < warm + timed && status; ++i) {
      if (flushFirst && !(status = (*flush)->enqueue(stream, i)))
        break;
      api.cuEventRecord(events[0], stream);
      status = device->check(api.cuMemcpyAsync(to, from, bytes, stream), "cuMemcpyAsync");
      api.cuEventRecord(events[1], stream);
      api.cuEventSynchronize(events[1]);
      float ms = 0;
      api.cuEventElapsedTime(&ms, events[0], events[1]);
      if (i >= warm)
        copies.push_back(ms);
    }
    return copies.empty() ? 0.0 : medianOf(copies);
  };
  for (unsigned i = 0; i < runs && status; ++i) {
    float ms = 0;
    api.cuEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]);
    times.push_back(ms);
  }
  if (status) {
    const size_t bytes = size_t(1) << 30;
    cuda::CUdeviceptr a = 0, b = 0;
    status = device->check(api.cuMemAlloc(&a, bytes), "allocating 1 GiB for the copy bandwidth");
    if (status)
      status = device->check(api.cuMemAlloc(&b, bytes), "allocating 1 GiB for the copy bandwidth");
    if (status) {
      api.cuMemsetD8(a, 1, bytes);
      double ms = timeCopies(b, a, bytes, /*warm=*/2, /*timed=*/10, /*flushFirst=*/false);
      if (status)
        r.copyGBs = 2.0 * bytes / (ms * 1e-3) / 1e9;
    }
    if (a)
      api.cuMemFree(a);
    if (b)
      api.cuMemFree(b);
  }
  // The same-size copy, L2 flushed before each run as for the kernel; after
  // the reference copy, which it would otherwise disturb (measured: the
  // 1 GiB reference fell from 4220 to 3800 GB/s after 2 GiB same-size copies).
  size_t half = static_cast<size_t>(bytesMoved / 2);
  cuda::CUdeviceptr from = 0, to = 0;
  if (status && half > 0 && api.cuMemAlloc(&from, half) == cuda::CUDA_SUCCESS &&
      api.cuMemAlloc(&to, half) == cuda::CUDA_SUCCESS) {
    api.cuMemsetD8(from, 1, half);
    double ms = timeCopies(to, from, half, /*warm=*/3, runs, /*flushFirst=*/true);
    if (status)
      r.sameSizeCopyMs = ms;
  }
  if (from)
    api.cuMemFree(from);
  if (to)
    api.cuMemFree(to);
  cleanup();
  if (!status)
    return status;
  r.medianMs = medianOf(times);
  r.minMs = *std::min_element(times.begin(), times.end());
  return r;
}


} // namespace nerve::run
