//===- nerve-bench-latency.cpp - compile, cache and launch latency -------===//
//
// What it costs to get from a spec to a running kernel through the C++ API,
// and to launch one:
//
//   cold        compile with the caches off, plus the first launch
//               (synchronised): the first compile in this process, then the
//               median of the next ones
//   disk hit    a fresh process (this program again) compiling the spec
//               with its entry in the disk cache, plus the first launch
//   memory hit  the same spec compiled again in one process
//   launch      host time per launch of a tiny kernel through
//               Module::launch on caller-owned buffers, asynchronous
//
// for the LIF forward and training specs and softmax (examples/), on the
// GPU when there is one, else the CPU.
//
// With --all, the cold compile of every example spec instead (neuron/ and
// tdim/), each with where its last compile went: nerve's passes before the
// PTX, the PTX (LLVM's NVPTX back end, beside the host code), the host
// code, linking it, and the driver's PTX JIT of the first kernel; with
// --lazy-kernels, compiled so that each kernel's PTX is generated at its
// first launch (CompileOptions::lazyKernels); with --specialize-sizes, each
// kernel compiled at its first launch for that launch's sizes
// (CompileOptions::specializeSizes). --size sets every dynamic size of the
// first launch (default 32).
//
//   nerve-bench-latency [--examples DIR] [--runs N]
//                       [--all [--lazy-kernels] [--specialize-sizes] [--size N]]
//
//===----------------------------------------------------------------------===//

#include "nerve/Runtime/CudaDriver.h"
#include "nerve/nerve.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace nerve;
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "nerve-bench-latency: %s\n", message.c_str());
  std::exit(1);
}

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    die("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Device (or host) buffers for one launch of an entry: its first two
/// dynamic dimensions of size `size`, the others 4 (a 5-d neuron's tensors
/// at 1024 in every dimension would not fit).
class Buffers {
public:
  Buffers(const EntryInfo &entry, bool gpu, int64_t size) : gpu(gpu) {
    std::map<std::string, int64_t> dimSizes;
    auto sizeOf = [&](const std::string &dim) {
      auto [it, inserted] = dimSizes.try_emplace(dim, dimSizes.size() < 2 ? size : 4);
      return it->second;
    };
    for (const ArgInfo &a : entry.args) {
      if (!a.isTensor) {
        args.push_back(a.dtype == DType::F32 || a.dtype == DType::F64 ? Arg::scalar(1.0)
                                                                       : Arg::scalarInt(1));
        continue;
      }
      std::vector<int64_t> sizes;
      int64_t elements = 1;
      for (size_t d = 0; d < a.dims.size(); ++d) {
        int64_t s = a.sizes[d] >= 0 ? a.sizes[d] : sizeOf(a.dims[d]);
        sizes.push_back(s);
        if (s > 0 && elements > (int64_t(1) << 40) / s)
          die("argument " + a.name + " has over 2^40 elements: the benchmark launches small sizes");
        elements *= s;
      }
      size_t bytes = static_cast<size_t>(std::max<int64_t>(elements, 1) * 8);
      void *p = nullptr;
      if (gpu) {
        cuda::CUdeviceptr d = 0;
        const cuda::Device *dev = *cuda::Device::get();
        if (!dev->check(dev->api().cuMemAlloc(&d, bytes), "cuMemAlloc").ok() ||
            !dev->check(dev->api().cuMemsetD8(d, 0, bytes), "cuMemsetD8").ok())
          die("cannot allocate device memory");
        p = reinterpret_cast<void *>(d);
      } else {
        p = std::calloc(bytes, 1);
        if (!p)
          die("cannot allocate host memory");
      }
      pointers.push_back(p);
      args.push_back(Arg::tensor(p, sizes));
    }
  }
  ~Buffers() {
    for (void *p : pointers) {
      if (gpu)
        (*cuda::Device::get())->api().cuMemFree(reinterpret_cast<cuda::CUdeviceptr>(p));
      else
        std::free(p);
    }
  }
  std::vector<Arg> args;

private:
  bool gpu;
  std::vector<void *> pointers;
};

void synchronize(bool gpu) {
  if (gpu)
    (*cuda::Device::get())->api().cuCtxSynchronize();
}

/// Compile (as `options` say) and launch once, synchronised: milliseconds
/// in all, and of compiling alone in `compileOnly`.
double compileAndLaunch(const std::string &spec, const CompileOptions &options, bool gpu,
                        double *compileOnly = nullptr, int64_t size = 32) {
  auto start = Clock::now();
  Result<std::shared_ptr<Module>> m = compile(spec, options);
  if (!m)
    die(m.message());
  const EntryInfo &entry = (*m)->entries().front();
  double compileMs = msSince(start);
  if (compileOnly)
    *compileOnly = compileMs;
  Buffers buffers(entry, gpu, size);
  auto launchStart = Clock::now();
  if (Status s = (*m)->launch(entry.name, buffers.args); !s)
    die(s.message());
  synchronize(gpu);
  double total = compileMs + msSince(launchStart);
  // The next compile starts on idle threads (lazyKernels generates the
  // kernels no launch asked for yet in the background).
  waitForBackgroundKernels();
  return total;
}

/// In a child process: one compile from the disk cache plus a launch.
int warmChild(const std::string &specPath, const std::string &cacheDir) {
  CompileOptions options;
  options.cacheDir = cacheDir;
  std::string spec = readFile(specPath);
  bool gpu = cudaAvailable();
  if (gpu && !(*cuda::Device::get())->makeCurrent())
    return 1;
  double compileMs = 0;
  double ms = compileAndLaunch(spec, options, gpu, &compileMs);
  CacheStats stats = cacheStats();
  std::printf("%.4f %.4f %llu\n", compileMs, ms, static_cast<unsigned long long>(stats.diskHits));
  return 0;
}

/// Runs this program as a warm child; returns its compile time and its
/// compile-and-first-launch time in ms.
std::pair<double, double> spawnWarm(const std::string &self, const std::string &spec,
                                    const std::string &cacheDir) {
  std::string command =
      "'" + self + "' --warm-child '" + spec + "' '" + cacheDir + "'";
  FILE *pipe = popen(command.c_str(), "r");
  if (!pipe)
    die("cannot start " + self);
  double compileMs = -1, ms = -1;
  unsigned long long hits = 0;
  if (std::fscanf(pipe, "%lf %lf %llu", &compileMs, &ms, &hits) != 3)
    ms = -1;
  if (pclose(pipe) != 0 || ms < 0)
    die("the warm child failed for " + spec);
  if (hits != 1)
    die("the warm child did not hit the disk cache for " + spec);
  return {compileMs, ms};
}

/// Where a compile went, summed from Module::compileTimes() (ms).
struct Stages {
  double passes = 0, ptx = 0, host = 0, link = 0, driver = 0;
};

Stages stagesOf(const Module &module) {
  Stages s;
  for (const auto &[stage, ms] : module.compileTimes()) {
    std::string_view name = stage;
    if (name.find("(beside the host code)") != std::string_view::npos)
      s.ptx += ms;
    else if (name == "host code generation")
      s.host += ms;
    else if (name == "link host code")
      s.link += ms;
    else if (name.rfind("load module", 0) == 0)
      s.driver += ms;
    else
      s.passes += ms;
  }
  return s;
}

/// What --all measures.
struct AllOptions {
  int runs = 7;
  bool lazyKernels = false;
  /// Each kernel compiled at its first launch for the launch's sizes.
  bool specializeSizes = false;
  /// The size of every dynamic dimension at the first launch.
  int64_t size = 32;
};

/// --all: every example spec compiled cold, the median of `runs` after one
/// not counted (the process's one-time set-up), and the stages of the last.
void coldAll(const std::string &examples, bool gpu, const AllOptions &all) {
  std::vector<std::string> paths;
  for (const char *folder : {"neuron", "tdim"}) {
    std::error_code error;
    fs::directory_iterator it(examples + "/" + folder, error);
    if (error)
      die("cannot list " + examples + "/" + folder + ": " + error.message());
    for (const auto &e : it)
      if (e.path().extension() == ".mlir")
        paths.push_back(e.path().string());
  }
  std::sort(paths.begin(), paths.end());
  std::printf("\ncold compile of each example (caches off; median of %d after one more), ms;\n"
              "stages of the last compile: nerve's passes, PTX beside the host code (with\n"
              "--lazy-kernels: a spec of one module's only), host code, its link, the\n"
              "driver's JIT of the first kernel%s%s; dynamic sizes %lld at the first launch\n\n",
              all.runs, all.lazyKernels ? "; kernels generated at their first launch" : "",
              all.specializeSizes ? "; kernels compiled at their first launch for its sizes "
                                    "(stages not shown)"
                                  : "",
              static_cast<long long>(all.size));
  std::printf("%-34s %8s %11s %8s %8s %8s %6s %8s\n", "spec", "compile", "+1st launch",
              "passes", "ptx", "host", "link", "driver");
  CompileOptions cold;
  cold.cache = false;
  cold.lazyKernels = all.lazyKernels;
  cold.specializeSizes = all.specializeSizes;
  for (const std::string &path : paths) {
    std::string spec = readFile(path);
    compileAndLaunch(spec, cold, gpu, nullptr, all.size);
    std::vector<double> compiles, totals;
    for (int i = 0; i < all.runs; ++i) {
      double compileMs = 0;
      totals.push_back(compileAndLaunch(spec, cold, gpu, &compileMs, all.size));
      compiles.push_back(compileMs);
    }
    Result<std::shared_ptr<Module>> m = compile(spec, cold);
    if (!m)
      die(m.message());
    Stages s = stagesOf(**m);
    std::string name = fs::path(path).parent_path().filename().string() + "/" +
                       fs::path(path).filename().string();
    std::printf("%-34s %8.1f %11.1f %8.1f %8.1f %8.1f %6.2f %8.1f\n", name.c_str(),
                median(compiles), median(totals), s.passes, s.ptx, s.host, s.link, s.driver);
  }
}

} // namespace

int main(int argc, char **argv) {
  if (argc == 4 && std::strcmp(argv[1], "--warm-child") == 0)
    return warmChild(argv[2], argv[3]);
  std::string examples = "examples";
  int runs = 7;
  bool all = false;
  AllOptions allOptions;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--examples" && i + 1 < argc)
      examples = argv[++i];
    else if (a == "--runs" && i + 1 < argc)
      runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--all")
      all = true;
    else if (a == "--lazy-kernels")
      allOptions.lazyKernels = true;
    else if (a == "--specialize-sizes")
      allOptions.specializeSizes = true;
    else if (a == "--size" && i + 1 < argc)
      allOptions.size = std::max<int64_t>(1, std::atoll(argv[++i]));
    else
      die("usage: nerve-bench-latency [--examples DIR] [--runs N] [--all [--lazy-kernels] "
          "[--specialize-sizes] [--size N]]");
  }
  std::string self = fs::canonical("/proc/self/exe").string();
  std::string why;
  bool gpu = cudaAvailable(&why);
  std::printf("nerve-bench-latency: %s\n", versionString().c_str());
  if (gpu) {
    const cuda::Device *d = *cuda::Device::get();
    std::printf("device: %s (driver %d), kernels on the GPU\n", d->name().c_str(),
                d->driverVersion());
    if (Status s = d->makeCurrent(); !s)
      die(s.message());
  } else {
    std::printf("device: none (%s), kernels on the CPU\n", why.c_str());
  }

  if (all) {
    allOptions.runs = runs;
    coldAll(examples, gpu, allOptions);
    return 0;
  }

  char tmpl[] = "/tmp/nerve-bench-latency-XXXXXX";
  if (!mkdtemp(tmpl))
    die("cannot create a temporary cache directory");
  std::string cacheDir = tmpl;

  struct SpecCase {
    const char *name;
    const char *path;
  };
  const SpecCase specs[] = {{"LIF forward", "neuron/lif_forward.mlir"},
                            {"LIF forward+backward", "neuron/lif_train.mlir"},
                            {"softmax", "tdim/softmax.mlir"}};
  std::printf("\ncold: compile + first launch with the caches off (the first in this process, "
              "then the median)\ndisk hit: a new process, compile alone and + first launch\n");
  std::printf("\n%-22s %11s %11s %9s %15s %11s\n", "spec (ms)", "cold first", "cold median",
              "disk hit", "+ 1st launch", "memory hit");
  for (const SpecCase &c : specs) {
    std::string path = examples + "/" + c.path;
    std::string spec = readFile(path);
    CompileOptions cold;
    cold.cache = false;
    double first = compileAndLaunch(spec, cold, gpu);
    std::vector<double> colds;
    for (int i = 0; i < runs; ++i)
      colds.push_back(compileAndLaunch(spec, cold, gpu));

    CompileOptions cached;
    cached.cacheDir = cacheDir;
    compileAndLaunch(spec, cached, gpu); // fills the disk cache
    std::vector<double> warms, warmLaunches;
    for (int i = 0; i < runs; ++i) {
      auto [compileMs, ms] = spawnWarm(self, path, cacheDir);
      warms.push_back(compileMs);
      warmLaunches.push_back(ms);
    }

    std::vector<double> memory;
    for (int i = 0; i < 200; ++i) {
      auto start = Clock::now();
      if (!compile(spec, cached))
        die("compile failed");
      memory.push_back(msSince(start));
    }
    std::printf("%-22s %11.2f %11.2f %9.3f %15.3f %11.4f\n", c.name, first, median(colds),
                median(warms), median(warmLaunches), median(memory));
  }

  // Host overhead per launch: a one-element axpy on caller-owned buffers.
  auto axpy = elementwiseKernel("axpy", "f32 x[n], f32 y[n], f32 a", "f32 z[n]",
                                "z = a * x + y");
  if (!axpy)
    die(axpy.message());
  Buffers buffers((*axpy)->entries().front(), gpu, 1);
  for (int i = 0; i < 100; ++i)
    if (Status s = (*axpy)->launch("axpy", buffers.args); !s)
      die(s.message());
  synchronize(gpu);
  const int launches = 20000;
  auto start = Clock::now();
  for (int i = 0; i < launches; ++i)
    (void)(*axpy)->launch("axpy", buffers.args);
  double hostUs = msSince(start) * 1000 / launches;
  synchronize(gpu);
  double totalUs = msSince(start) * 1000 / launches;
  std::printf("\nlaunch of a 1-element kernel through Module::launch: %.2f us host time each "
              "(%.2f us with the device's work, %d back to back)\n",
              hostUs, totalUs, launches);
  std::printf("\nreference (../shared/targets.md, same GPU kind): CuPy ElementwiseKernel cold "
              "57-105 ms, disk hit 0.6 ms; Triton small kernel cold 28-31 ms, launch 9.3 us\n");
  std::printf("nerve's targets: cold <= 50 ms (neuron kernel), disk hit <= 1 ms, launch <= 10 "
              "us\n");
  std::error_code ec;
  fs::remove_all(cacheDir, ec);
  return 0;
}
